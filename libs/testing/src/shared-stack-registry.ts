/**
 * Where the workers of a `mocha --parallel` run list the processes of their shared stacks
 * (shared-stack.ts), so that the run's global teardown (mocha-fixtures.ts) can wait until none
 * outlives its worker. Kept apart from shared-stack.ts: the teardown loads no stack code.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from './net.js';

/** A process as listed: its pid and its start time (so a pid used again is never taken for it). */
interface Listed {
  pid: number;
  start: string | undefined;
}

/** The run's directory: named by the pid of the process that runs the global fixtures. */
const registryDir = (runPid: number) => path.join(os.tmpdir(), `mgw-shared-stacks-${runPid}`);

/** Field 22 of /proc/<pid>/stat (start time since boot); undefined where there is no /proc. */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Whether the listed process still runs (not a zombie, not another process on the same pid). */
function running({ pid, start }: Listed): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (start === undefined) return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[0] !== 'Z' && fields[19] === start;
  } catch {
    return false;
  }
}

/**
 * A worker lists the pids of its shared stack's processes (none: the stack was stopped). Only
 * under `mocha --parallel` (a worker's parent runs the global fixtures); a serial run stops its
 * shared stack in the teardown itself.
 */
export function registerSharedPids(pids: number[] | undefined): void {
  if (process.env.MOCHA_WORKER_ID === undefined) return;
  const dir = registryDir(process.ppid);
  const file = path.join(dir, `${process.pid}.json`);
  if (!pids) {
    rmSync(file, { force: true });
    return;
  }
  mkdirSync(dir, { recursive: true });
  const listed: Listed[] = pids.map((pid) => ({ pid, start: startTime(pid) }));
  writeFileSync(file, JSON.stringify(listed));
}

/**
 * The global teardown of a `mocha --parallel` run: its workers have exited, each having sent its
 * shared stack's processes SIGTERM; waits until every one is gone (a stop takes a few seconds),
 * then kills what still runs after `timeoutMs` and throws naming it.
 */
export async function awaitSharedStacksGone(timeoutMs = 30_000): Promise<void> {
  const dir = registryDir(process.pid);
  if (!existsSync(dir)) return;
  const listed = readdirSync(dir).flatMap(
    (f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as Listed[],
  );
  try {
    await waitFor(() => !listed.some(running), {
      timeoutMs,
      intervalMs: 100,
      what: 'the shared stacks stopped',
    });
  } catch {
    const left = listed.filter(running);
    for (const { pid } of left) process.kill(pid, 'SIGKILL');
    throw new Error(
      `shared stack processes ran ${timeoutMs} ms after their worker exited (killed): ${left.map((l) => l.pid).join(', ')}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
