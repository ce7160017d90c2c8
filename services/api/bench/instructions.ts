/**
 * The accept bench's load-independent measure (`BENCH_PARTS=instructions`): instructions per
 * `POST /send` of the gateway and of the bare express app adding one BullMQ job, each run under
 * valgrind's callgrind, which counts the instructions a process executes whatever else the machine
 * is doing (req/s on a shared machine swing with the load; instruction counts do not). Each app gets
 * `BENCH_CG_WARM` requests (JIT warm-up, 800) then `BENCH_CG_REQUESTS` measured ones (400), 10
 * connections; the counters are dumped between the two. Every side is counted once per round of
 * the bench's rotated schedule, its control (the baseline counted again) among them. Slow (valgrind runs Node ~50× slower):
 * minutes per app. Needs `valgrind` (Debian package) on the PATH.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { callgrindDump, callgrindWrapper, waitFor, type Instructions, type SideBySide } from '@mgw/testing';

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

/**
 * Instructions per request of each side's app, counted in the rotated rounds of `bench` (each
 * counted run a fresh process under callgrind; the control is the baseline's app counted again as
 * a side of its own): the figures `total` and `mainThread` of every side and round.
 */
export async function instructionsSideBySide<S extends string>(
  bench: SideBySide<S>,
  apps: Record<S, CallgrindApp>,
  body: string,
  cwd: string,
): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'mgw-callgrind-'));
  try {
    await bench.run(async (side, round) => {
      const counted = await instructionsPerRequest(apps[side], body, cwd, dir, `${side}-${round}`);
      return { ...counted };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Instructions per request of one app: a fresh process under callgrind, warmed up, then counted. */
async function instructionsPerRequest(
  app: CallgrindApp,
  body: string,
  cwd: string,
  dir: string,
  name: string,
): Promise<Instructions> {
  const [command, ...args] = [...callgrindWrapper(dir, name), process.execPath, ...app.args];
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
    await callgrindDump(dir, name, child.pid!, env);
    const measured = Math.max(1, await load(REQUESTS));
    const counted = await callgrindDump(dir, name, child.pid!, env);
    return { total: counted.total / measured, mainThread: counted.mainThread / measured };
  } finally {
    child.kill('SIGKILL');
  }
}
