/**
 * Processes a mocha worker keeps for the whole run beside its shared stack — the dashboard suites'
 * chromium, launched once per worker and reused by every suite in it — listed where the run's
 * global teardown waits for them to be gone (`awaitSharedStacksGone` in shared-stack-registry.ts
 * reads every file of the run's directory), so that none outlives the run. Kept apart from the
 * registry's own file (`<worker pid>.json`, the shared stack's): each kind has a file of its own,
 * `<worker pid>.<kind>.json`. Only under `mocha --parallel`: a serial run ends its own processes.
 */
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Field 22 of /proc/<pid>/stat (start time since boot), as the registry lists it. */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/**
 * Lists (or, with none, unlists) this worker's processes of one kind (`chromium`) for the run's
 * teardown to wait for. The directory is the registry's: `mgw-shared-stacks-<pid of the run>`.
 */
export function listWorkerPids(kind: string, pids: number[] | undefined): void {
  if (process.env.MOCHA_WORKER_ID === undefined) return;
  const dir = path.join(os.tmpdir(), `mgw-shared-stacks-${process.ppid}`);
  const file = path.join(dir, `${process.pid}.${kind}.json`);
  if (!pids || pids.length === 0) {
    rmSync(file, { force: true });
    return;
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, JSON.stringify(pids.map((pid) => ({ pid, start: startTime(pid) }))));
}

/**
 * The pids of this process's children whose command name (`comm` in /proc/<pid>/stat) matches
 * `command` (all of them without it); none where there is no /proc.
 */
export function childPids(command?: RegExp): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const own = String(process.pid);
  const found: number[] = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const parent = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
      if (parent === own && (!command || command.test(comm))) found.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}
