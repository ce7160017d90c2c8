/**
 * What tracing costs the API's accept, the API alone (issues 56 and 71): one API process per side
 * on this bench's Redis — `off` (no OTLP endpoint: no SDK loaded), `unsampled` (tracing on, every
 * new trace a ratio miss: `parentbased_traceidratio` 0), `ratio` (the 10 % the Kubernetes files
 * ship) and `on` (every trace sampled) — the traced ones exporting over OTLP/HTTP protobuf to a
 * receiver in this process, each taking `POST /send` to one recipient for a device with no sender
 * (its jobs wait in its queue, as in `accept.bench.ts`): nothing else of the gateway competes for
 * the cores, unlike `services/sender/bench/tracing.bench.ts`.
 *
 * - rate: autocannon, BENCH_CONNECTIONS (10) for BENCH_SECONDS (5); BENCH_ROUNDS (6, rounded up to a
 *   multiple of the sides) rounds of every side, the order rotated by one each round: for each
 *   traced side the median of its rounds' API CPU per request (/proc) ÷ off's, against issue 71's
 *   goals (≤ 1.02, ≤ 1.05, ≤ 1.20 on Node 24). `control`, always there, is a second process with
 *   tracing off: what two equal processes differ by, the noise floor; a goal narrower than the
 *   floor gets no verdict (libs/testing side-by-side.ts);
 * - instructions (BENCH_PARTS=rate,instructions; not run by default): each API under valgrind's
 *   callgrind, instructions per request after a warm-up, whatever the machine's load (minutes);
 *   BENCH_CG_ROUNDS rotated rounds of every side, the control among them.
 *
 * BENCH_SIDES (e.g. `off,unsampled`) picks the sides; BENCH_PROFILE=dir writes CPU profiles.
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
  acceptedPost,
  entryArgs,
  freePort,
  requireFreshBuild,
  SideBySide,
  startOtlpReceiver,
  TRACING_GOALS,
  TRACING_SAMPLERS,
  type Goal,
  valgrindAvailable,
  waitFor,
} from '@mgw/testing';
import { instructionsSideBySide, type CallgrindApp } from './instructions.js';

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
/**
 * The sides compared with `off` (BENCH_SIDES picks some, e.g. `off,unsampled`): tracing on with
 * nothing sampled (every new trace a ratio miss), at the 10 % ratio the Kubernetes files ship, and
 * every trace sampled. BENCH_ON_ENV='{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE":"2048"}' adds settings to
 * every traced side.
 */
const traced = (side: 'unsampled' | 'ratio' | 'on'): Record<string, string> => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
  ...TRACING_SAMPLERS[side],
  ...(JSON.parse(process.env.BENCH_ON_ENV ?? '{}') as Record<string, string>),
});
const allSides = {
  off: {},
  /** A second process with tracing off, always measured: what two equal processes differ by. */
  control: {},
  unsampled: traced('unsampled'),
  ratio: traced('ratio'),
  on: traced('on'),
};
type Side = keyof typeof allSides;
const wanted = (process.env.BENCH_SIDES ?? 'off,unsampled,ratio,on').split(',') as Side[];
const others = wanted.filter((s) => s !== 'off' && s !== 'control' && s in allSides);
const sides = Object.fromEntries(
  (['off', 'control', ...others] as Side[]).map((s) => [s, allSides[s]]),
) as Partial<Record<Side, Record<string, string>>>;
const sideNames = Object.keys(sides) as Side[];
/** What each traced side's API CPU per request ÷ off's is held to (issue 71), on Node 24. */
const GOALS: Partial<Record<Side, Goal>> = {
  unsampled: { max: TRACING_GOALS.api.unsampled },
  ratio: { max: TRACING_GOALS.api.ratio },
  on: { max: TRACING_GOALS.api.on },
};

function cpuUs(pid: number | undefined): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}
const post = (url: string, token: string) => acceptedPost(url, token, body);

const started: ChildProcess[] = [];
try {
  const { value: token } = await new TokenStore(redis).create({ name: 'bench', deviceId });
  await new SessionStore(redis).update(deviceId, 'connected', { phone: '15550009999' });
  console.log(
    `${process.version}; load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores; ` +
      `the API alone (no sender); sides ${sideNames.join(', ')}`,
  );

  if (PARTS.has('rate')) {
    const apps = {} as Record<Side, { url: string; pid: number }>;
    for (const side of sideNames) {
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
    // Warm every side (JIT, connections, scripts), unmeasured.
    for (const side of sideNames) await run(side);
    // Rounds of every side, the order rotated by one each round: each side in each place equally
    // often, and never one run twice in a row (a process measured right after itself runs warmer,
    // and `off` in every pair, or at both ends of a reversed order, gained 5–10 % so: as large as
    // the goals). Each traced side's ratio is to `off` of the same round.
    const rounds = new SideBySide<Side>({ baseline: 'off', control: 'control', others, rounds: ROUNDS });
    await rounds.run((side) => run(side));
    console.log(`  POST /send, ${CONNECTIONS} connections, ${DURATION_S} s runs; ${rounds.describe()}`);
    for (const line of rounds.report({ metric: 'cpu', label: 'API CPU µs/request', goals: GOALS }))
      console.log(`  ${line}`);
    for (const line of rounds.report({ metric: 'rps', label: 'req/s' })) console.log(`  ${line}`);
    await Promise.all(
      started.splice(0).map((c) => new Promise((resolve) => c.once('exit', resolve).kill('SIGTERM'))),
    );
  }

  if (PARTS.has('instructions')) {
    if (!valgrindAvailable()) console.log('  instructions per request: skipped (valgrind is not installed)');
    else {
      const apps = {} as Record<Side, CallgrindApp>;
      for (const side of sideNames) {
        const port = await freePort();
        const url = `http://127.0.0.1:${port}/api/messenger/v1/send`;
        apps[side] = {
          name: side,
          args: entryArgs('services/api', 'main', BUILT),
          env: { ...apiEnv, ...sides[side], PORT: String(port), METRICS_PORT: String(await freePort()) },
          url,
          token,
          ready: () => post(url, token),
        };
      }
      const counted = new SideBySide<Side>({
        baseline: 'off',
        control: 'control',
        others,
        rounds: Number(process.env.BENCH_CG_ROUNDS ?? 1),
      });
      await instructionsSideBySide(counted, apps, body, ROOT);
      console.log(`  instructions per POST /send (callgrind, 10 connections; ${counted.describe()}):`);
      for (const [metric, label] of [
        ['mainThread', 'main thread instructions/request'],
        ['total', 'instructions/request'],
      ] as const)
        for (const line of counted.report({ metric, label })) console.log(`    ${line}`);
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
