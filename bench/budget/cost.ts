/**
 * The cost budget (issue 81, docs/benchmarks.md "The cost budget"): what the accept path executes,
 * counted in instructions by valgrind's callgrind, against the budget kept beside this file
 * (`budget.json`, with the date and build each figure was set on). Instructions, not seconds: on 2
 * shared cores a CPU-time ratio cannot resolve a few per cent, an instruction count can.
 *
 * Figures, each per unit of work, the main thread's (the event loop: JS and I/O) and all threads'
 * (with V8's compiler and GC helpers, which move more):
 * - `send`: one `POST /send` to one recipient;
 * - `list`: one accepted recipient of a `POST /send` to a 1,000-recipient list;
 * - tracing (issue 81, item 3; BUDGET_TRACING=all, or e.g. `unsampled,on`; not run by default):
 *   `send` again on an API per traced side (`unsampled`, `ratio`: 10 %, `on`: every trace;
 *   libs/testing tracing-samplers.ts), exporting over OTLP/HTTP to a receiver in this process, and
 *   on a `control` (a second untraced API), each ÷ the untraced `send` of the same run: printed
 *   against the issue's goals (≤ 1.02, ≤ 1.05, ≤ 1.20, main thread), with no verdict when the
 *   control's floor is wider than a goal's margin, and not held (docs/benchmarks.md "The cost
 *   budget" says why). Their exports come by size, once per EXPORT_EVERY (300) requests' spans,
 *   not by the clock: under callgrind a request takes some 50 times longer, so the SDK's 5 s
 *   schedule would export after every few requests, where at full speed it exports the spans of
 *   hundreds at once (an export's fixed cost, an HTTP request, is some 1.8 M instructions: three
 *   requests' worth). 300 requests per export is the SDK's schedule at 60 requests a second; a
 *   busier API exports fewer times per request.
 *
 * How a count holds still: the built API runs under callgrind with instrumentation off until the
 * counted window (`countedProcess`): its start and a warm-up of each request shape run uncounted
 * (the JIT settles), then the window counts BUDGET_SENDS (600) sends, 10 at a time, or BUDGET_LISTS
 * (20) lists one after another. Its queues are emptied before each window (a device with no sender:
 * jobs would pile up, and the accept reads their count). Node runs with a fixed young generation
 * (`--max-semi-space-size`, as the images do not set it: the same for every run) so that the
 * scavenges fall on the same requests. Each API of a run runs alone, in an order rotated from run
 * to run.
 *
 * `node bench/budget/cost.ts` (through tsx: `npm run cost-budget`) measures BUDGET_RUNS (3) runs of
 * each figure and prints them, their spread ((max − min) / min) and each figure's median against
 * its budget. It exits 1 when a median exceeds its budget by more than the allowance
 * (`budget.json`'s `allowance`, the run-to-run spread measured when the budget was set, rounded
 * up). `--write` sets the budget to the medians of this run (a change that costs more writes the
 * new budget in the same commit and says why: docs/benchmarks.md keeps the history).
 * BUDGET_PLANT=<iterations> adds a loop of that many iterations to every request the API serves
 * (`planted-cost.mjs`, loaded with `--import`: the API's code untouched), to show the check
 * catches a known extra cost. BUDGET_KEEP_DUMPS=1 keeps callgrind's dumps of every window (read
 * them with `callgrind_annotate`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { BULL_PREFIX } from '@mgw/contracts';
import { SessionStore, TokenStore } from '@mgw/store';
import {
  acceptedPost,
  countedProcess,
  entryArgs,
  freePort,
  requireFreshBuild,
  noiseFloor,
  startOtlpReceiver,
  TRACING_GOALS,
  TRACING_SAMPLERS,
  valgrindAvailable,
  verdict,
  waitFor,
  type Instructions,
} from '@mgw/testing';
import { startRedisServer } from '@mgw/testing/redis-server';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const BUDGET_FILE = path.join(HERE, 'budget.json');
const RUNS = Number(process.env.BUDGET_RUNS ?? 3);
const SENDS = Number(process.env.BUDGET_SENDS ?? 600);
const LISTS = Number(process.env.BUDGET_LISTS ?? 20);
const LIST_SIZE = 1000;
const WRITE = process.argv.includes('--write');
const TRACED_SIDES = ['unsampled', 'ratio', 'on'] as const;
type Traced = (typeof TRACED_SIDES)[number];
/** BUDGET_TRACING=all (or e.g. `unsampled,on`): the traced sides measured, none by default. */
const askedTracing = process.env.BUDGET_TRACING ?? '';
const TRACED: readonly Traced[] = TRACED_SIDES.filter(
  (s) => askedTracing === 'all' || askedTracing.split(',').includes(s),
);
type Side = 'off' | 'control' | Traced;
/** A traced side is read against a control (a second untraced API): its ratio is the noise floor. */
const SIDES: readonly Side[] = TRACED.length > 0 ? ['off', 'control', ...TRACED] : ['off'];
/** A traced side exports its spans once per this many requests (below). */
const EXPORT_EVERY = 300;

type Figure = 'send' | 'list';
interface Budget {
  /** When and on what the figures were set. */
  date: string;
  build: string;
  node: string;
  /**
   * How far a median may exceed its figure, per thread: the run-to-run spread measured when it was
   * set, rounded up (the main thread's is the tighter: V8's helper threads move more).
   */
  allowance: Instructions;
  /** Instructions per unit of work, main thread and all threads. */
  figures: Record<Figure, Instructions>;
  /** Why the last change, in a sentence. */
  reason: string;
}

if (!valgrindAvailable()) {
  console.error('cost budget: valgrind is not installed (apt-get install valgrind)');
  process.exit(1);
}
requireFreshBuild();

const redisServer = await startRedisServer();
const redis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
const deviceId = `budget-${randomUUID().slice(0, 8)}`;
const dir = mkdtempSync(path.join(tmpdir(), 'mgw-budget-'));
const started: ChildProcess[] = [];
const otlp = await startOtlpReceiver({ decode: false });

const one = JSON.stringify({ to: '15551234567', text: 'a message the budget counts' });
const list = JSON.stringify({
  to: Array.from({ length: LIST_SIZE }, (_, i) => String(15550000000 + i)),
  text: 'a list the budget counts',
});

/** The spans of EXPORT_EVERY requests at `side`'s ratio (a span per sampled request): its batch. */
function exportBatch(side: Traced): number {
  const sampler: Record<string, string> = TRACING_SAMPLERS[side];
  return Math.max(1, Math.round(EXPORT_EVERY * Number(sampler.OTEL_TRACES_SAMPLER_ARG ?? 1)));
}

/** An API under callgrind (instrumentation off until a window), traced as `side` says. */
async function startApi(side: Side, token: string) {
  const port = await freePort();
  const sampler = side === 'off' || side === 'control' ? undefined : TRACING_SAMPLERS[side];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    REDIS_URL: redisServer.url,
    MGW_ENCRYPTION_KEY: process.env.MGW_ENCRYPTION_KEY ?? `bench:${randomBytes(32).toString('base64')}`,
    HOST: '127.0.0.1',
    PORT: String(port),
    METRICS_PORT: String(await freePort()),
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    RATE_LIMIT_SEND: '100000000',
    DEVICE_MAX_QUEUED_MESSAGES: '100000000',
    DEVICE_MAX_QUEUED_BYTES: '10000000000',
    MAX_RECIPIENTS: String(LIST_SIZE),
    ...(process.env.BUDGET_PLANT ? { MGW_PLANTED_ITERATIONS: process.env.BUDGET_PLANT } : {}),
    ...(sampler
      ? {
          OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
          ...sampler,
          OTEL_BSP_SCHEDULE_DELAY: '3600000',
          OTEL_BSP_MAX_EXPORT_BATCH_SIZE: String(exportBatch(side as Traced)),
        }
      : {}),
  };
  const counted = countedProcess(dir, `api-${side}`, env);
  const [command, ...args] = [
    ...counted.argv,
    process.execPath,
    '--max-semi-space-size=16',
    ...(process.env.BUDGET_PLANT ? ['--import', path.join(HERE, 'planted-cost.mjs')] : []),
    ...entryArgs('services/api', 'main', true),
  ];
  const child = spawn(command!, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
  started.push(child);
  const url = `http://127.0.0.1:${port}/api/messenger/v1/send`;
  const load = async (body: string, amount: number, connections: number) => {
    const r = await autocannon({
      url,
      connections,
      amount,
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    });
    if (r.non2xx || r.errors) throw new Error(`${side}: ${r.non2xx} answers not 202, ${r.errors} errors`);
  };
  const count = async (body: string, amount: number, connections: number) =>
    counted.count(child.pid!, () => load(body, amount, connections));
  await waitFor(() => acceptedPost(url, token, one), {
    timeoutMs: 300_000,
    intervalMs: 500,
    what: `the API (${side}) under valgrind`,
  });
  return { side, child, load, count };
}

/** The device's queue emptied (a device with no sender: the accept reads its count). */
async function empty(): Promise<void> {
  const queue = new Queue(`send-{${deviceId}}`, { connection: redis, prefix: BULL_PREFIX });
  await queue.obliterate({ force: true });
  await queue.close();
}

const per = (c: Instructions, n: number) => ({
  mainThread: Math.round(c.mainThread / n),
  total: Math.round(c.total / n),
});

/**
 * Run `i`: one API per side, each alone (started, warmed up uncounted so that the JIT settles on
 * both shapes, counted, stopped before the next starts: APIs started together and counted in turn
 * read up to 32 % apart, the one that waited longest the highest), the order rotated by `i`.
 */
async function run(
  i: number,
  token: string,
): Promise<Record<Figure, Instructions> & Partial<Record<Side, Instructions>>> {
  const sides = SIDES.map((_, k) => SIDES[(i + k) % SIDES.length]!);
  const sends = {} as Record<Side, Instructions>;
  let lists: Instructions | undefined;
  for (const side of sides) {
    const api = await startApi(side, token);
    try {
      // The same warm-up on every side (a side warmed less reads up to 4 % higher).
      await api.load(one, 2000, 10);
      await api.load(list, 40, 1);
      await empty();
      sends[side] = per(await api.count(one, SENDS, 10), SENDS);
      if (side === 'off') {
        await empty();
        lists = per(await api.count(list, LISTS, 1), LISTS * LIST_SIZE);
      }
    } finally {
      api.child.kill('SIGKILL');
      await empty().catch(() => undefined);
    }
  }
  return { ...sends, send: sends.off, list: lists! };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const spread = (xs: number[]) => (Math.max(...xs) - Math.min(...xs)) / Math.min(...xs);
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

let failed = false;
try {
  const { value: token } = await new TokenStore(redis).create({ name: 'cost budget', deviceId });
  await new SessionStore(redis).update(deviceId, 'connected', { phone: '15550009999' });
  const budget = JSON.parse(readFileSync(BUDGET_FILE, 'utf8')) as Budget;
  // Another Node major runs other code (V8, the http parser): its counts are not this budget's.
  const major = (v: string) => v.replace(/^v/, '').split('.')[0];
  if (!WRITE && major(budget.node) !== major(process.version))
    throw new Error(
      `the budget was set on Node ${budget.node}, this is ${process.version}: run it on that Node, ` +
        'or set a budget for this one (--write) in a commit that says why',
    );
  const runs: Awaited<ReturnType<typeof run>>[] = [];
  for (let i = 0; i < RUNS; i++) runs.push(await run(i, token));
  const medians = {} as Record<Figure, Instructions>;
  console.log(
    `cost budget (${process.version}; ${RUNS} runs; budget of ${budget.date}, ${budget.build}, ` +
      `allowance ${pct(budget.allowance.mainThread)} main thread, ${pct(budget.allowance.total)} all threads${process.env.BUDGET_PLANT ? `; planted cost ${process.env.BUDGET_PLANT}` : ''}):`,
  );
  for (const figure of ['send', 'list'] as Figure[]) {
    medians[figure] = { mainThread: 0, total: 0 };
    for (const thread of ['mainThread', 'total'] as const) {
      const xs = runs.map((r) => r[figure][thread]);
      const m = median(xs);
      medians[figure][thread] = m;
      const limit = budget.figures[figure][thread];
      const ratio = m / limit;
      const over = ratio > 1 + budget.allowance[thread];
      failed ||= over;
      console.log(
        `  ${figure.padEnd(4)} ${thread === 'total' ? 'all threads' : 'main thread'}: ` +
          `${xs.map((x) => x.toLocaleString('en')).join(' / ')} (spread ${pct(spread(xs))}) → ` +
          `median ${m.toLocaleString('en')}, ${ratio.toFixed(3)} × budget ${limit.toLocaleString('en')}` +
          `${over ? '  OVER BUDGET' : ''}`,
      );
    }
  }
  // Tracing (BUDGET_TRACING): each traced API's send ÷ the untraced one's of the same run, main
  // thread, the median against issue 81's goal, read against the control's floor (no verdict when
  // the floor is wider than the goal's margin). Printed, not held: see docs/benchmarks.md.
  if (TRACED.length > 0) {
    const ratios = (side: Side) => runs.map((r) => r[side]!.mainThread / r.send.mainThread);
    const floor = noiseFloor(ratios('control'));
    const show = (xs: number[]) => xs.map((x) => x.toFixed(3)).join(' / ');
    console.log(
      `  send control ÷ untraced, main thread: ${show(ratios('control'))} (noise floor ±${pct(floor)})`,
    );
    for (const side of TRACED) {
      const xs = ratios(side);
      console.log(
        `  send traced ${side} ÷ untraced, main thread: ${show(xs)} → ` +
          verdict(`${side} ÷ off`, median(xs), floor, { max: TRACING_GOALS.api[side] }),
      );
    }
  }
  if (WRITE) {
    // The allowance only widens by itself: a spread wider than it is worth a look before it is kept.
    const widest = (t: 'mainThread' | 'total') =>
      Math.max(...(['send', 'list'] as Figure[]).map((f) => spread(runs.map((r) => r[f][t]))));
    const next: Budget = {
      ...budget,
      date: new Date().toISOString().slice(0, 10),
      node: process.version,
      figures: medians,
      allowance: {
        mainThread: Math.max(budget.allowance.mainThread, Math.ceil(widest('mainThread') * 200) / 200),
        total: Math.max(budget.allowance.total, Math.ceil(widest('total') * 200) / 200),
      },
      reason: process.env.BUDGET_REASON ?? budget.reason,
    };
    writeFileSync(BUDGET_FILE, `${JSON.stringify(next, null, 2)}\n`);
    console.log(`budget.json written (set its build and reason)`);
    failed = false;
  }
} finally {
  for (const c of started) c.kill('SIGKILL');
  await redis.quit();
  await redisServer.stop();
  await otlp.close();
  if (process.env.BUDGET_KEEP_DUMPS === '1') console.log(`callgrind dumps kept in ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
