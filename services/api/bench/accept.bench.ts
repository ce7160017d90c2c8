/**
 * What accepting a message costs the API, against baselines measured in the same run:
 *
 * - POST /send to one recipient (autocannon, 10 connections): the gateway's req/s ÷ a bare
 *   express app adding one BullMQ job per request on the same Redis (`bare-express-queue.ts`, the
 *   baseline: what a job per message costs by itself, so the gateway's own share can be told from
 *   BullMQ's and Redis's), beside a bare express app alone and a control (a second bare app with
 *   its job, on a queue of its own: the noise floor), in rounds whose order rotates by one each
 *   (libs/testing side-by-side.ts); and each app's Redis script calls per request, the round trips
 *   whatever the machine's load;
 * - a 10,000-recipient list: the gateway's accept time ÷ a raw BullMQ `addBulk` of the same jobs,
 *   alternating, and the worst `/healthz` latency while the gateway accepts it (event-loop stalls);
 * - Redis bytes and API memory per queued recipient (a 1,000-recipient list with a 60,000-character
 *   text), beside the figures measured before content was stored once (220 MB for that list).
 *
 * The gateway runs as its own process with a device marked connected and no sender (jobs pile up
 * in Redis), rate limits and the device quota raised. Both apps run as `npm start` runs the
 * gateway: plain Node on JavaScript — the API's build (run `npm run build` first; a missing or
 * stale build stops the bench), the bare app with Node's own type stripping — no tsx loader or
 * source maps on either side. BENCH_SOURCES=1 runs both through tsx from the sources instead.
 * Nothing is asserted; ratios are printed.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { BULL_PREFIX, PRIORITY, newMessageId, newPlatformMessageId } from '@mgw/contracts';
import { SessionStore, TokenStore } from '@mgw/store';
import {
  entryArgs,
  freePort,
  requireFreshBuild,
  SideBySide,
  TSX_ARGS,
  valgrindAvailable,
  waitFor,
} from '@mgw/testing';
import { instructionsSideBySide, type CallgrindApp } from './instructions.js';
import { cpuMs, median } from './support/measure.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const DURATION_S = Number(process.env.BENCH_SECONDS ?? 5);
const LIST = Number(process.env.BENCH_LIST ?? 10_000);
/** The figures are for 10 connections; BENCH_CONNECTIONS shows how the gap moves with more. */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const BUILT = process.env.BENCH_SOURCES !== '1';
if (BUILT) requireFreshBuild();
// The bare apps' own type stripping is Node 22.18+'s (on by default), absent on Node 20.
if (BUILT && !(process.features as { typescript?: string | false }).typescript) {
  console.error(
    `accept bench: the bare baselines need Node's type stripping (Node 22.18+ or 24, this is ${process.version}): ` +
      'run it there, or with BENCH_SOURCES=1 (everything through tsx).',
  );
  process.exit(1);
}
/**
 * Which parts run (e.g. BENCH_PARTS=rps to profile the single-recipient path alone);
 * `instructions` (not run by default: minutes, needs valgrind) counts instructions per /send.
 */
const PARTS = new Set((process.env.BENCH_PARTS ?? 'rps,list,memory').split(','));

const redisUrl = process.env.REDIS_URL!;
const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
const deviceId = `bench-${randomUUID().slice(0, 8)}`;
const body = JSON.stringify({ to: '15551234567', text: 'hello from the accept bench' });

async function startProcess(
  entry: string[],
  env: Record<string, string>,
  readyUrl: string,
): Promise<ChildProcess> {
  // BENCH_PROFILE=dir writes a CPU profile of the process (node --cpu-prof) there on exit.
  const profile = process.env.BENCH_PROFILE
    ? [`--cpu-prof`, `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
    : [];
  const child = spawn(process.execPath, [...profile, ...entry], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitFor(async () => (await fetch(readyUrl).catch(() => undefined))?.ok === true, {
    timeoutMs: 60_000,
    what: entry.join(' '),
  });
  return child;
}

async function rps(
  url: string,
  pids: (number | undefined)[],
  token?: string,
): Promise<{
  rps: number;
  p99: number;
  errors: number;
  cpuUsPerRequest: number[];
  loadUs: number;
  scriptsPerRequest: number;
}> {
  const scriptsBefore = await scriptCalls();
  const cpuBefore = pids.map(cpuMs);
  const loadBefore = process.cpuUsage();
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: DURATION_S,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body,
  });
  const requests = Math.max(1, result.requests.total);
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors,
    cpuUsPerRequest: pids.map((pid, i) => ((cpuMs(pid) - cpuBefore[i]!) * 1000) / requests),
    // autocannon runs in this process: what the load itself takes of the shared cores
    loadUs: ((u) => (u.user + u.system) / requests)(process.cpuUsage(loadBefore)),
    scriptsPerRequest: ((await scriptCalls()) - scriptsBefore) / requests,
  };
}

/**
 * Scripts Redis has run for clients so far (EVAL and EVALSHA calls, commands scripts call not
 * counted): each is a round trip. The gateway's requests share accept calls, the bare app with its
 * job makes one per request; a check that grows its own round trip per request shows here whatever
 * the machine's load (issue 53: a blocklist read before each accept call).
 */
async function scriptCalls(): Promise<number> {
  const stats = await redis.info('commandstats');
  let calls = 0;
  for (const m of stats.matchAll(/^cmdstat_(?:eval|evalsha|eval_ro|evalsha_ro):calls=(\d+)/gm))
    calls += Number(m[1]);
  return calls;
}

const apiPort = await freePort();
const opsPort = await freePort();
const barePort = await freePort();
const bareQueuePort = await freePort();
const controlPort = await freePort();
/** The gateway's settings (its ports aside): rate limits and the device quota out of the way. */
const apiEnv = {
  HOST: '127.0.0.1',
  LOG_LEVEL: 'info',
  NODE_ENV: 'production',
  RATE_LIMIT_SEND: '100000000',
  RATE_LIMIT_WINDOW_MS: '60000',
  DEVICE_MAX_QUEUED_MESSAGES: '100000000',
  DEVICE_MAX_QUEUED_BYTES: '10000000000',
  MAX_RECIPIENTS: String(Math.max(LIST, 1000)),
};
const api = await startProcess(
  entryArgs('services/api', 'main', BUILT),
  { ...apiEnv, PORT: String(apiPort), METRICS_PORT: String(opsPort) },
  `http://127.0.0.1:${apiPort}/healthz`,
);
/** Starts a baseline app of this folder; it reports `ready` once it listens. */
async function startBaseline(file: string, env: Record<string, string>): Promise<ChildProcess> {
  const child = fork(path.join(ROOT, 'services/api/bench', file), {
    execArgv: BUILT ? [] : TSX_ARGS,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  await new Promise((r) => child.once('message', r));
  return child;
}
const bare = await startBaseline('bare-express.ts', { PORT: String(barePort) });
const queueDevice = `${deviceId}-bare`;
const bareQueue = await startBaseline('bare-express-queue.ts', {
  PORT: String(bareQueuePort),
  BENCH_DEVICE: queueDevice,
  BENCH_PREFIX: BULL_PREFIX,
  BENCH_PRIORITY: String(PRIORITY.send),
});
// The control: a second bare app with its job, on a queue of its own.
const controlDevice = `${deviceId}-control`;
const control = await startBaseline('bare-express-queue.ts', {
  PORT: String(controlPort),
  BENCH_DEVICE: controlDevice,
  BENCH_PREFIX: BULL_PREFIX,
  BENCH_PRIORITY: String(PRIORITY.send),
});

try {
  const { value: token } = await new TokenStore(redis).create({ name: 'bench', deviceId });
  await new SessionStore(redis).update(deviceId, 'connected', { phone: '15550009999' });
  const gatewayUrl = `http://127.0.0.1:${apiPort}/api/messenger/v1/send`;
  const bareUrl = `http://127.0.0.1:${barePort}/api/messenger/v1/send`;
  const bareQueueUrl = `http://127.0.0.1:${bareQueuePort}/api/messenger/v1/send`;
  const controlUrl = `http://127.0.0.1:${controlPort}/api/messenger/v1/send`;

  // --- single-recipient accept rate, rotated rounds ---------------------------------------------
  if (PARTS.has('rps')) {
    // The API's and Redis's CPU per request say more than req/s on a shared machine.
    const redisPid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]);
    const apps = {
      gateway: { url: gatewayUrl, pids: [api.pid, redisPid], token },
      bare: { url: bareUrl, pids: [bare.pid], token: undefined },
      queue: { url: bareQueueUrl, pids: [bareQueue.pid, redisPid], token: undefined },
      control: { url: controlUrl, pids: [control.pid, redisPid], token: undefined },
    };
    type App = keyof typeof apps;
    // warm-up (JIT, connections, scripts)
    for (const app of Object.values(apps)) await rps(app.url, app.pids, app.token);
    // The baseline is the bare app with its job (issue 71's outside measure); the control, a
    // second process of it on a queue of its own.
    const rounds = new SideBySide<App>({
      baseline: 'queue',
      control: 'control',
      others: ['gateway', 'bare'],
      rounds: ROUNDS,
    });
    await rounds.run(async (which) => {
      const app = apps[which];
      const r = await rps(app.url, app.pids, app.token);
      if (r.errors > 0) console.log(`  (${which} round had ${r.errors} non-2xx/errors)`);
      return {
        rps: r.rps,
        p99: r.p99,
        apiCpu: r.cpuUsPerRequest[0]!,
        redisCpu: r.cpuUsPerRequest[1] ?? 0,
        load: r.loadUs,
        scripts: r.scriptsPerRequest,
      };
    });
    const m = (which: App, metric: string) => Math.round(rounds.median(which, metric));
    console.log(
      `POST /send, 1 recipient, ${CONNECTIONS} connections, ${DURATION_S} s each; ${rounds.describe()} ` +
        `(queue: bare express + a BullMQ job per request; bare: bare express alone)`,
    );
    for (const line of rounds.report({ metric: 'rps', label: 'req/s' })) console.log(`  ${line}`);
    console.log(
      `  req/s ${rounds.ratioText('gateway', 'rps', 'bare')}; gateway p99 ${m('gateway', 'p99')} ms`,
    );
    for (const line of rounds.report({ metric: 'apiCpu', label: 'app CPU µs/request' }))
      console.log(`  ${line}`);
    console.log(
      `  Redis CPU per request: gateway ${m('gateway', 'redisCpu')} µs, queue ${m('queue', 'redisCpu')} µs; ` +
        `the load generator (autocannon) ${m('gateway', 'load')} µs against the gateway, ${m('bare', 'load')} µs against the bare app`,
    );
    const scripts = (which: App) => rounds.median(which, 'scripts').toFixed(2);
    console.log(
      `  Redis script calls (round trips) per request: gateway ${scripts('gateway')} (its requests share ` +
        `accept calls), bare express + a BullMQ job ${scripts('queue')}`,
    );
  }

  // --- instructions per request (callgrind), whatever the machine's load ---------------------------
  if (PARTS.has('instructions')) {
    if (!valgrindAvailable()) console.log('instructions per request: skipped (valgrind is not installed)');
    else {
      const post = (url: string, auth?: string) =>
        fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(auth ? { authorization: `Bearer ${auth}` } : {}),
          },
          body,
        }).then(
          (r) => r.status === 202,
          () => false,
        );
      const queueApp = async (name: string, device: string): Promise<CallgrindApp> => {
        const url = `http://127.0.0.1:${await freePort()}/api/messenger/v1/send`;
        return {
          name,
          args: [...(BUILT ? [] : TSX_ARGS), 'services/api/bench/bare-express-queue.ts'],
          env: {
            PORT: new URL(url).port,
            BENCH_DEVICE: device,
            BENCH_PREFIX: BULL_PREFIX,
            BENCH_PRIORITY: String(PRIORITY.send),
          },
          url,
          ready: () => post(url),
        };
      };
      const cgApiPort = await freePort();
      const cgApiUrl = `http://127.0.0.1:${cgApiPort}/api/messenger/v1/send`;
      const counted = new SideBySide<'queue' | 'control' | 'gateway'>({
        baseline: 'queue',
        control: 'control',
        others: ['gateway'],
        rounds: Number(process.env.BENCH_CG_ROUNDS ?? 1),
      });
      await instructionsSideBySide(
        counted,
        {
          queue: await queueApp('queue', queueDevice),
          control: await queueApp('control', controlDevice),
          gateway: {
            name: 'gateway',
            args: entryArgs('services/api', 'main', BUILT),
            env: { ...apiEnv, PORT: String(cgApiPort), METRICS_PORT: String(await freePort()) },
            url: cgApiUrl,
            token,
            ready: () => post(cgApiUrl, token),
          },
        },
        body,
        ROOT,
      );
      console.log(`instructions per POST /send (callgrind, 10 connections; ${counted.describe()}):`);
      for (const [metric, label] of [
        ['total', 'instructions/request'],
        ['mainThread', 'main thread instructions/request'],
      ] as const)
        for (const line of counted.report({ metric, label })) console.log(`  ${line}`);
    }
  }

  // --- a 10,000-recipient list vs a raw addBulk, with /healthz watched -----------------------------
  const to = Array.from({ length: LIST }, (_, i) => String(15550000000 + i));
  if (PARTS.has('list')) {
    const rawQueue = new Queue(`send-{${deviceId}-raw}`, { connection: redis, prefix: BULL_PREFIX });
    const gatewayMs: number[] = [];
    const rawMs: number[] = [];
    const healthWorst: number[] = [];
    for (let round = 0; round < 3; round++) {
      // gateway, with a /healthz probe every 2 ms measuring how long it waits
      let probing = true;
      let worst = 0;
      const probe = (async () => {
        while (probing) {
          const t = performance.now();
          await fetch(`http://127.0.0.1:${apiPort}/healthz`);
          worst = Math.max(worst, performance.now() - t);
          await new Promise((r) => setTimeout(r, 2));
        }
      })();
      const t0 = performance.now();
      const res = await fetch(gatewayUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ to, text: `list ${round}` }),
      });
      gatewayMs.push(performance.now() - t0);
      probing = false;
      await probe;
      healthWorst.push(worst);
      if (res.status !== 202) throw new Error(`list: ${res.status} ${await res.text()}`);

      // raw addBulk of the same jobs (ids only, as ours are)
      const contentId = newMessageId();
      const jobs = to.map((phone) => {
        const messageId = newMessageId();
        return {
          name: 'send',
          data: {
            kind: 'send',
            messageId,
            platformMessageId: newPlatformMessageId(),
            deviceId,
            to: phone,
            contentId,
            batchId: contentId,
            linkGeneration: 0,
            enqueuedAt: Date.now(),
          },
          opts: {
            jobId: messageId,
            priority: PRIORITY.send,
            attempts: 5,
            backoff: { type: 'exponential', delay: 2000 },
          },
        };
      });
      const t1 = performance.now();
      await rawQueue.addBulk(jobs);
      rawMs.push(performance.now() - t1);
    }
    console.log(
      `${LIST}-recipient list: gateway ${gatewayMs.map(Math.round).join('/')} ms, raw addBulk ${rawMs.map(Math.round).join('/')} ms ` +
        `→ ratio ${(median(gatewayMs) / median(rawMs)).toFixed(2)}; worst /healthz wait during the list ${healthWorst.map(Math.round).join('/')} ms`,
    );
    await rawQueue.obliterate({ force: true });
    await rawQueue.close();
  }

  // --- Redis bytes and API memory per queued recipient ---------------------------------------------
  if (PARTS.has('memory')) {
    const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1]);
    const rss = async () =>
      Number(
        /^process_resident_memory_bytes (\S+)$/m.exec(
          await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text(),
        )?.[1],
      );
    const text = 'x'.repeat(60_000);
    const thousand = to.slice(0, 1000);
    const before = await usedMemory();
    const rssBefore = await rss();
    const res = await fetch(gatewayUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ to: thousand, text }),
    });
    if (res.status !== 202) throw new Error(`memory list: ${res.status}`);
    const perRecipient = ((await usedMemory()) - before - text.length) / 1000;
    const rssPerRecipient = ((await rss()) - rssBefore) / 1000;
    console.log(
      `1,000 recipients × 60,000-character text: Redis +${Math.round(perRecipient)} bytes per recipient beyond the text ` +
        `(before content was stored once: ≈ 220,000), API RSS ${rssPerRecipient >= 0 ? '+' : ''}${Math.round(rssPerRecipient)} bytes per recipient`,
    );
  }
} finally {
  api.kill('SIGTERM');
  bare.kill('SIGTERM');
  bareQueue.kill('SIGTERM');
  control.kill('SIGTERM');
  for (const id of [deviceId, queueDevice, controlDevice]) {
    const queue = new Queue(`send-{${id}}`, { connection: redis, prefix: BULL_PREFIX });
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
  }
  await redis.quit();
}
