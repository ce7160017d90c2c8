/**
 * Instruction counts of a Node process run under valgrind's callgrind: the benches' measure that
 * does not move with the machine's load (callgrind counts the instructions a process executes,
 * whatever else runs beside it). A process is started under `callgrindWrapper(dir, name)`; each
 * `callgrindDump` answers the instructions it executed since the previous dump. Valgrind runs Node
 * some 20-50× slower: count hundreds of operations, not thousands.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { waitFor } from './net.js';

export function valgrindAvailable(): boolean {
  return spawnSync('valgrind', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** The command that starts a process under callgrind, writing its dumps to `dir` as `<name>.<pid>.<n>`. */
export function callgrindWrapper(dir: string, name: string): string[] {
  return [
    'valgrind',
    '--tool=callgrind',
    '--quiet',
    // Its control pipes beside its output, not in /tmp where cleaners may take them.
    `--vgdb-prefix=${dir}/vgdb`,
    `--callgrind-out-file=${dir}/${name}.%p`,
  ];
}

/** Instructions executed: by all threads, and by the main thread (JS, I/O) alone. */
export interface Instructions {
  total: number;
  /**
   * The event loop's thread: the rest is V8's helper threads, mostly its optimising compiler,
   * which under valgrind keeps compiling long after a warm-up (the main thread is the steadier
   * figure to compare).
   */
  mainThread: number;
}

/**
 * Dumps the counters of the process `pid` (started with `callgrindWrapper(dir, name)`) and answers
 * the instructions since its previous dump. `env` is the process's own environment: vgdb finds the
 * process by names that carry $HOST.
 */
export async function callgrindDump(
  dir: string,
  name: string,
  pid: number,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Instructions> {
  const before = new Set(readdirSync(dir));
  spawnSync('callgrind_control', [`--vgdb-prefix=${dir}/vgdb`, '-d', String(pid)], { stdio: 'ignore', env });
  let file = '';
  await waitFor(
    () => {
      file =
        readdirSync(dir).find((f) => !before.has(f) && new RegExp(`^${name}\\.\\d+\\.\\d+$`).test(f)) ?? '';
      return file !== '' && /^totals: \d+/m.test(readFileSync(path.join(dir, file), 'utf8'));
    },
    { timeoutMs: 120_000, intervalMs: 200, what: `the callgrind dump of ${name}` },
  );
  const full = path.join(dir, file);
  const total = Number(/^totals: (\d+)/m.exec(readFileSync(full, 'utf8'))![1]);
  const annotated = spawnSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', full], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  }).stdout;
  const main = /^\s*([\d,]+) \([\d.]+%\)\s+\S*:node::Start\(int, char\*\*\)/m.exec(annotated ?? '');
  return { total, mainThread: main ? Number(main[1]!.replace(/,/g, '')) : Number.NaN };
}
