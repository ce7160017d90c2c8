/**
 * The accept bench's load-independent measure (`BENCH_PARTS=instructions`): instructions per
 * `POST /send` of the gateway and of the bare express app adding one BullMQ job, each run under
 * valgrind's callgrind, which counts the instructions a process executes whatever else the machine
 * is doing (req/s on a shared machine swing with the load; instruction counts do not). Each app gets
 * `BENCH_CG_WARM` requests (JIT warm-up, 800) then `BENCH_CG_REQUESTS` measured ones (400), 10
 * connections; the counters are dumped between the two. Slow (valgrind runs Node ~50× slower):
 * minutes per app. Needs `valgrind` (Debian package) on the PATH.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { callgrindDump, callgrindWrapper, waitFor, type Instructions } from '@mgw/testing';

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
      const [command, ...args] = [...callgrindWrapper(dir, app.name), process.execPath, ...app.args];
      const env = { ...process.env, ...app.env };
      const child = spawn(command!, args, { cwd, env, stdio: ['ignore', 'ignore', 'ignore'] });
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
        await callgrindDump(dir, app.name, child.pid!, env);
        const measured = Math.max(1, await load(REQUESTS));
        const counted = await callgrindDump(dir, app.name, child.pid!, env);
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
