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

/**
 * A process under callgrind that counts only inside windows the caller opens (`--instr-atstart=no`):
 * what runs before the first window (Node's start, a warm-up) and between windows costs no
 * instrumentation and is not counted, so a count holds only the work it means, and the whole run
 * takes seconds where counting from the start takes minutes. Each thread is counted apart
 * (`--separate-threads=yes`): thread 1 is the main thread (JS, I/O), the others V8's compiler and
 * GC helpers, whose share moves more from run to run.
 */
export interface CountedProcess {
  /** The command (valgrind's, then `command`) to spawn. */
  argv: string[];
  /**
   * Counts what the process executes while `work` runs (instrumentation switched on before, off
   * after, the counters zeroed first and dumped at the end).
   */
  count(pid: number, work: () => Promise<void>): Promise<Instructions>;
}

/**
 * `env` is the environment the counted process gets: vgdb, which switches its instrumentation,
 * finds it by names that carry its $HOST and $USER.
 */
export function countedProcess(dir: string, name: string, env: NodeJS.ProcessEnv): CountedProcess {
  let windows = 0;
  const control = (pid: number, ...args: string[]) => {
    const r = spawnSync('callgrind_control', [`--vgdb-prefix=${dir}/vgdb`, ...args, String(pid)], {
      encoding: 'utf8',
      env,
    });
    if (r.status !== 0 || /error|failed/i.test(`${r.stdout}${r.stderr}`))
      throw new Error(`callgrind_control ${args.join(' ')} ${pid}: ${r.stdout}${r.stderr}`.trim());
  };
  return {
    argv: [
      'valgrind',
      '--tool=callgrind',
      '--quiet',
      '--instr-atstart=no',
      '--separate-threads=yes',
      `--vgdb-prefix=${dir}/vgdb`,
      `--callgrind-out-file=${dir}/${name}.%p`,
    ],
    async count(pid, work) {
      control(pid, '--zero');
      control(pid, '--instr=on');
      try {
        await work();
      } finally {
        control(pid, '--instr=off');
      }
      control(pid, '--dump');
      windows += 1;
      // One file per thread: <name>.<pid>.<dump>-<thread>.
      const pattern = new RegExp(`^${name}\\.${pid}\\.${windows}-(\\d+)$`);
      const complete = (f: string) => /^totals: \d+/m.test(readFileSync(path.join(dir, f), 'utf8'));
      // callgrind_control returns once the command is sent: the files are complete when each has
      // its totals and no other thread's file appeared since the last look.
      let files: string[] = [];
      await waitFor(
        () => {
          const seen = readdirSync(dir).filter((f) => pattern.test(f));
          const settled = seen.length > 0 && seen.length === files.length && seen.every(complete);
          files = seen;
          return settled;
        },
        { timeoutMs: 120_000, intervalMs: 200, what: `the callgrind dump of ${name}` },
      );
      let total = 0;
      let mainThread = 0;
      for (const f of files) {
        const n = Number(/^totals: (\d+)/m.exec(readFileSync(path.join(dir, f), 'utf8'))![1]);
        total += n;
        if (Number(pattern.exec(f)![1]) === 1) mainThread = n;
      }
      return { total, mainThread };
    },
  };
}
