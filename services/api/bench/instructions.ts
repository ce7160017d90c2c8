/**
 * The accept bench's load-independent measure (`BENCH_PARTS=instructions`): instructions per
 * `POST /send` of the gateway and of the bare express app adding one BullMQ job, each run under
 * valgrind's callgrind, which counts the instructions a process executes whatever else the machine
 * is doing (req/s on a shared machine swing with the load; instruction counts do not). Each app gets
 * `BENCH_CG_WARM` requests (JIT warm-up, 800) then `BENCH_CG_REQUESTS` measured ones (400), 10
 * connections; the counters are dumped between the two. Slow (valgrind runs Node ~50× slower):
 * minutes per app. Needs `valgrind` (Debian package) on the PATH.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { waitFor } from '@mgw/testing';

const WARM = Number(process.env.BENCH_CG_WARM ?? 800);
const REQUESTS = Number(process.env.BENCH_CG_REQUESTS ?? 400);

export interface CallgrindApp {
  name: string;
  /** Node's arguments (entry point and flags). */
  args: string[];
  env: Record<string, string>;
  url: string;
  /** Answers true once the app serves. */
  ready: () => Promise<boolean>;
  token?: string;
}

export function valgrindAvailable(): boolean {
  return spawnSync('valgrind', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** Instructions per request of each app, measured one after the other. */
export async function instructionsPerRequest(
  apps: CallgrindApp[],
  body: string,
  cwd: string,
): Promise<Record<string, Instructions>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'mgw-callgrind-'));
  const out: Record<string, Instructions> = {};
  try {
    for (const app of apps) {
      const child = spawn(
        'valgrind',
        [
          '--tool=callgrind',
          // Its control pipes beside its output, not in /tmp where cleaners may take them.
          `--vgdb-prefix=${dir}/vgdb`,
          `--callgrind-out-file=${dir}/${app.name}.%p`,
          process.execPath,
          ...app.args,
        ],
        { cwd, env: { ...process.env, ...app.env }, stdio: ['ignore', 'ignore', 'ignore'] },
      );
      try {
        await waitFor(app.ready, {
          timeoutMs: 600_000,
          intervalMs: 1000,
          what: `${app.name} under valgrind`,
        });
        const load = async (amount: number) =>
          (
            await autocannon({
              url: app.url,
              connections: 10,
              amount,
              method: 'POST',
              body,
              headers: {
                'content-type': 'application/json',
                ...(app.token ? { authorization: `Bearer ${app.token}` } : {}),
              },
            })
          ).requests.total;
        await load(WARM);
        await dump(dir, app, child);
        const measured = Math.max(1, await load(REQUESTS));
        const counted = await dump(dir, app, child);
        out[app.name] = { total: counted.total / measured, mainThread: counted.mainThread / measured };
      } finally {
        child.kill('SIGKILL');
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

/** Instructions per request: all threads', and the main thread's (JS, I/O) alone. */
export interface Instructions {
  total: number;
  /**
   * The event loop's thread: the rest is V8's helper threads, mostly its optimising compiler,
   * which under valgrind keeps compiling long after the warm-up (the main thread is the steadier
   * figure to compare).
   */
  mainThread: number;
}

/** Dumps the counters since the last dump (callgrind_control) and returns their instruction totals. */
async function dump(dir: string, app: CallgrindApp, child: ChildProcess): Promise<Instructions> {
  const before = new Set(readdirSync(dir));
  // vgdb finds the process by names that carry $HOST: the same environment as the app's.
  spawnSync('callgrind_control', [`--vgdb-prefix=${dir}/vgdb`, '-d', String(child.pid)], {
    stdio: 'ignore',
    env: { ...process.env, ...app.env },
  });
  let file = '';
  await waitFor(
    () => {
      file =
        readdirSync(dir).find((f) => !before.has(f) && new RegExp(`^${app.name}\\.\\d+\\.\\d+$`).test(f)) ??
        '';
      return file !== '' && /^totals: \d+/m.test(readFileSync(path.join(dir, file), 'utf8'));
    },
    { timeoutMs: 120_000, intervalMs: 200, what: `the callgrind dump of ${app.name}` },
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
