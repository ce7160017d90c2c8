/**
 * What tracing costs the API's accept, the API alone (issue 56): two API processes on this bench's
 * Redis, `off` (no OTLP endpoint: no SDK loaded) and `on` (every trace sampled,
 * `parentbased_always_on`, exported over OTLP/HTTP protobuf to a receiver in this process), each
 * taking `POST /send` to one recipient for a device with no sender (its jobs wait in its queue, as
 * in `accept.bench.ts`): nothing else of the gateway competes for the cores, unlike
 * `services/sender/bench/tracing.bench.ts`, where the sender sends what the API accepts meanwhile.
 *
 * - rate: autocannon, BENCH_CONNECTIONS (10) for BENCH_SECONDS (5), BENCH_ROUNDS (6) rounds
 *   alternating off/on (ABBA): the median `on` ÷ `off` requests a second (goal ≥ 0.95), and the
 *   API's CPU per request (/proc);
 * - instructions (BENCH_PARTS=rate,instructions; not run by default): each API under valgrind's callgrind,
 *   instructions per request after a warm-up, whatever the machine's load (minutes; needs valgrind).
 *
 * Nothing is asserted.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { BULL_PREFIX } from '@mgw/contracts';
import { SessionStore, TokenStore } from '@mgw/store';
import {
  entryArgs,
  freePort,
  requireFreshBuild,
  startOtlpReceiver,
  valgrindAvailable,
  waitFor,
} from '@mgw/testing';
import { instructionsPerRequest } from './instructions.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const ROUNDS = Math.max(2, Number(process.env.BENCH_ROUNDS ?? 6));
const DURATION_S = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const PARTS = new Set((process.env.BENCH_PARTS ?? 'rate').split(','));
const BUILT = process.env.BENCH_SOURCES !== '1';
if (BUILT) requireFreshBuild();

const redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
const deviceId = `bench-${randomUUID().slice(0, 8)}`;
const body = JSON.stringify({ to: '15551234567', text: 'hello from the tracing bench' });
const otlp = await startOtlpReceiver({ decode: false });
/** Rate limits and the device's queue caps out of the way (as in accept.bench.ts). */
const apiEnv = {
  HOST: '127.0.0.1',
  LOG_LEVEL: 'info',
  NODE_ENV: 'production',
  RATE_LIMIT_SEND: '100000000',
  RATE_LIMIT_WINDOW_MS: '60000',
  DEVICE_MAX_QUEUED_MESSAGES: '100000000',
  DEVICE_MAX_QUEUED_BYTES: '10000000000',
};
const sides = {
  off: {},
  on: {
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    OTEL_TRACES_SAMPLER: 'parentbased_always_on',
    // BENCH_ON_ENV='{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE":"2048"}': other settings for the `on` side.
    ...(JSON.parse(process.env.BENCH_ON_ENV ?? '{}') as Record<string, string>),
  },
};
type Side = keyof typeof sides;

function cpuUs(pid: number | undefined): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const post = (url: string, token: string) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body,
  }).then(
    (r) => r.status === 202,
    () => false,
  );

const started: ChildProcess[] = [];
try {
  const { value: token } = await new TokenStore(redis).create({ name: 'bench', deviceId });
  await new SessionStore(redis).update(deviceId, 'connected', { phone: '15550009999' });
  console.log(
    `${process.version}; load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores; ` +
      `the API alone (no sender), tracing off vs on (every trace sampled)`,
  );

  if (PARTS.has('rate')) {
    const apps = {} as Record<Side, { url: string; pid: number }>;
    for (const side of Object.keys(sides) as Side[]) {
      const port = await freePort();
      // BENCH_PROFILE=dir writes a CPU profile of each API (node --cpu-prof) there when it stops.
      const profile = process.env.BENCH_PROFILE
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}/${side}`]
        : [];
      const child = spawn(process.execPath, [...profile, ...entryArgs('services/api', 'main', BUILT)], {
        cwd: ROOT,
        env: {
          ...process.env,
          ...apiEnv,
          ...sides[side],
          PORT: String(port),
          METRICS_PORT: String(await freePort()),
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      started.push(child);
      const url = `http://127.0.0.1:${port}/api/messenger/v1/send`;
      await waitFor(() => post(url, token), { timeoutMs: 60_000, what: `the ${side} API` });
      apps[side] = { url, pid: child.pid! };
    }
    const runs = {
      off: { rps: [] as number[], cpu: [] as number[] },
      on: { rps: [] as number[], cpu: [] as number[] },
    };
    const run = async (side: Side) => {
      const cpu0 = cpuUs(apps[side].pid);
      const r = await autocannon({
        url: apps[side].url,
        connections: CONNECTIONS,
        duration: DURATION_S,
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body,
      });
      if (r.non2xx) throw new Error(`${side}: ${r.non2xx} answers not 202`);
      return { rps: r.requests.average, cpu: (cpuUs(apps[side].pid) - cpu0) / Math.max(1, r.requests.total) };
    };
    // Warm both (JIT, connections, scripts), unmeasured.
    await run('off');
    await run('on');
    for (let i = 0; i < ROUNDS; i++) {
      for (const side of i % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
        const r = await run(side);
        runs[side].rps.push(r.rps);
        runs[side].cpu.push(r.cpu);
      }
    }
    const paired = runs.on.rps.map((r, i) => r / runs.off.rps[i]!);
    console.log(
      `  accept rate (POST /send, ${CONNECTIONS} connections, ${ROUNDS}×${DURATION_S} s ABBA): ` +
        `off ${runs.off.rps.map(Math.round).join('/')} req/s, on ${runs.on.rps.map(Math.round).join('/')} req/s; ` +
        `on/off round by round ${paired.map((p) => p.toFixed(2)).join(' ')} → median ${median(paired).toFixed(3)} (goal ≥ 0.95)`,
    );
    console.log(
      `  API CPU per request: off ${median(runs.off.cpu).toFixed(0)} µs, on ${median(runs.on.cpu).toFixed(0)} µs → ` +
        `on/off ${(median(runs.on.cpu) / median(runs.off.cpu)).toFixed(3)}`,
    );
    await Promise.all(
      started.splice(0).map((c) => new Promise((resolve) => c.once('exit', resolve).kill('SIGTERM'))),
    );
  }

  if (PARTS.has('instructions')) {
    if (!valgrindAvailable()) console.log('  instructions per request: skipped (valgrind is not installed)');
    else {
      const apps = [];
      for (const side of Object.keys(sides) as Side[]) {
        const port = await freePort();
        const url = `http://127.0.0.1:${port}/api/messenger/v1/send`;
        apps.push({
          name: side,
          args: entryArgs('services/api', 'main', BUILT),
          env: { ...apiEnv, ...sides[side], PORT: String(port), METRICS_PORT: String(await freePort()) },
          url,
          token,
          ready: () => post(url, token),
        });
      }
      const counts = await instructionsPerRequest(apps, body, ROOT);
      const k = (n: number) => `${(n / 1000).toFixed(0)} k`;
      const { off, on } = counts as Record<Side, { total: number; mainThread: number }>;
      console.log(
        `  instructions per POST /send (callgrind, 10 connections): off ${k(off.mainThread)} main thread ` +
          `(${k(off.total)} all threads), on ${k(on.mainThread)} (${k(on.total)}) → on/off ` +
          `${(on.mainThread / off.mainThread).toFixed(3)} main thread, ${(on.total / off.total).toFixed(3)} all threads ` +
          `(1 ÷ this: the accept rate's ratio where the API is bound by its own CPU)`,
      );
    }
  }
} finally {
  for (const c of started) c.kill('SIGTERM');
  const queue = new Queue(`send-{${deviceId}}`, { connection: redis, prefix: BULL_PREFIX });
  await queue.obliterate({ force: true }).catch(() => undefined);
  await queue.close();
  await redis.quit();
  await otlp.close();
}
