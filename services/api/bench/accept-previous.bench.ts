/**
 * The accept path against an earlier release, side by side in one run (issue 70: "the accept path
 * costs at most 3 % more CPU per request with workspaces, the accept bench before and after"):
 * POST /send to one recipient, this build's API and the API of BENCH_BASE (default the upgrade
 * base, UPGRADE_BASE_COMMIT: the release before workspaces), with a control — a second API of the
 * base on a database of its own — under the same load (autocannon, 10 connections), in rounds
 * whose order rotates by one each (libs/testing side-by-side.ts: each side in each place equally
 * often, none measured right after itself). Printed: each one's API CPU per request (from /proc)
 * and req/s, the ratios this ÷ base (the median of the rounds' ratios), the control's ratio as the
 * noise floor, and the verdict on issue 70's 3 % — or its refusal when the floor is wider.
 *
 * BENCH_BARE=1 (issue 71) adds a side in the same run: the bare express app adding one BullMQ job
 * per request with the gateway's job options (`bare-express-queue.ts`, on a database of its own),
 * the outside measure's baseline; this ÷ bare and base ÷ bare are printed beside this ÷ base, for
 * req/s and, with BENCH_PARTS=instructions (BENCH_CG_ROUNDS rotated rounds, rounded up to a
 * multiple of the sides), for instructions per request.
 *
 * The base is built from the repository's history (libs/testing previous-version.ts: `git archive`,
 * `npm ci`, `npm run build`, cached in the temp directory; the upgrade test builds the same one).
 * Each API has a Redis database of its own on the bench's Redis, with its token and its connected
 * device written by its own release's stores, so neither reads the other's formats. Both run as
 * `npm start` runs the gateway (plain Node on the build; run `npm run build` first). The bare app
 * runs with Node's type stripping (Node 22.18+), through tsx on an older Node. BENCH_API_ENV
 * (`K=V,K=V`) sets more variables for both APIs (e.g. `LOG_LEVEL=warn`); BENCH_PROFILE=dir writes
 * CPU profiles of every side. Nothing is asserted; ratios are printed.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { BULL_PREFIX, PRIORITY } from '@mgw/contracts';
import {
  buildPreviousVersion,
  freePort,
  requireFreshBuild,
  SideBySide,
  TSX_ARGS,
  UPGRADE_BASE_COMMIT,
  valgrindAvailable,
  waitFor,
} from '@mgw/testing';
import { instructionsSideBySide, type CallgrindApp } from './instructions.js';
import { cpuMs } from './support/measure.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const DURATION_S = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
/** Runs of each side before the measured rounds: V8 still optimises this build's path after one. */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const BASE = process.env.BENCH_BASE ?? UPGRADE_BASE_COMMIT;
const BARE = process.env.BENCH_BARE === '1';
const PROFILE = process.env.BENCH_PROFILE
  ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
  : [];
/** The bare app's TypeScript: Node's own type stripping where there is one, else tsx. */
const BARE_ARGS = (process.features as { typescript?: string | false }).typescript ? [] : TSX_ARGS;
const BARE_APP = path.join(ROOT, 'services/api/bench/bare-express-queue.ts');
const EXTRA_ENV = Object.fromEntries(
  (process.env.BENCH_API_ENV ?? '')
    .split(',')
    .filter(Boolean)
    .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
) as Record<string, string>;
const body = JSON.stringify({ to: '15551234567', text: 'hello from the accept bench' });
requireFreshBuild();

const base = await buildPreviousVersion(BASE, (line) => console.log(`  ${line}`));
const redisUrl = process.env.REDIS_URL!;
/** A database of the bench's Redis for one side (the URL's own database number replaced). */
const dbUrl = (db: number) => {
  const url = new URL(redisUrl);
  url.pathname = `/${db}`;
  return url.toString();
};

type Name = 'this' | 'base' | 'control' | 'bare';
interface Side {
  name: Name;
  url: string;
  token?: string;
  proc: ChildProcess;
}

/**
 * One release's API on its own database: its token and its connected device written by that
 * release's own stores (`libs/store` of its tree), then its API started from its build.
 */
async function seedSide(name: string, root: string, db: number): Promise<string> {
  const store = (await import(pathToFileURL(path.join(root, 'libs/store/dist/index.js')).href)) as {
    TokenStore: new (r: Redis) => {
      create(i: { name: string; deviceId: string }): Promise<{ value: string }>;
    };
    SessionStore: new (r: Redis) => { update(d: string, s: string, p: { phone: string }): Promise<unknown> };
  };
  const redis = new Redis(dbUrl(db), { maxRetriesPerRequest: null });
  await redis.flushdb();
  const deviceId = `bench-${name}`;
  const { value: token } = await new store.TokenStore(redis).create({ name: 'bench', deviceId });
  await new store.SessionStore(redis).update(deviceId, 'connected', { phone: '15550009999' });
  redis.disconnect();
  return token;
}

/** The API's settings (port aside): rate limits and the device quota out of the way. */
const apiEnv = (db: number): Record<string, string> => ({
  REDIS_URL: dbUrl(db),
  HOST: '127.0.0.1',
  LOG_LEVEL: 'info',
  NODE_ENV: 'production',
  RATE_LIMIT_SEND: '100000000',
  RATE_LIMIT_WINDOW_MS: '60000',
  DEVICE_MAX_QUEUED_MESSAGES: '100000000',
  DEVICE_MAX_QUEUED_BYTES: '10000000000',
  ...EXTRA_ENV,
});

/** The bare app's settings: its own database, the gateway's queue prefix and send priority. */
const bareEnv = (db: number): Record<string, string> => ({
  REDIS_URL: dbUrl(db),
  BENCH_DEVICE: 'bench-bare',
  BENCH_PREFIX: BULL_PREFIX,
  BENCH_PRIORITY: String(PRIORITY.send),
});

async function startSide(name: 'this' | 'base' | 'control', root: string, db: number): Promise<Side> {
  const token = await seedSide(name, root, db);
  const port = await freePort();
  const proc = spawn(process.execPath, [...PROFILE, path.join(root, 'services/api/dist/main.js')], {
    cwd: root,
    env: { ...process.env, ...apiEnv(db), PORT: String(port), METRICS_PORT: String(await freePort()) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitFor(
    async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok === true,
    {
      timeoutMs: 60_000,
      what: `${name}'s API`,
    },
  );
  return { name, url: `http://127.0.0.1:${port}/api/messenger/v1/send`, token, proc };
}

/** The bare express app adding one BullMQ job, on its own (flushed) database. */
async function startBare(db: number): Promise<Side> {
  const redis = new Redis(dbUrl(db), { maxRetriesPerRequest: null });
  await redis.flushdb();
  redis.disconnect();
  const port = await freePort();
  const proc = fork(BARE_APP, {
    cwd: ROOT,
    execArgv: [...PROFILE, ...BARE_ARGS],
    env: { ...process.env, ...bareEnv(db), PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  await new Promise((r) => proc.once('message', r));
  return { name: 'bare', url: `http://127.0.0.1:${port}/api/messenger/v1/send`, proc };
}

/** One run of the load against a side: its req/s and its process's CPU per request (µs). */
async function run(side: Side): Promise<{ rps: number; cpuUs: number; errors: number }> {
  const before = cpuMs(side.proc.pid);
  const result = await autocannon({
    url: side.url,
    connections: CONNECTIONS,
    duration: DURATION_S,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(side.token ? { authorization: `Bearer ${side.token}` } : {}),
    },
    body,
  });
  const requests = Math.max(1, result.requests.total);
  return {
    rps: result.requests.average,
    cpuUs: ((cpuMs(side.proc.pid) - before) * 1000) / requests,
    errors: result.non2xx + result.errors,
  };
}

/**
 * `rps` (default): CPU per request and req/s under load, rotated rounds; `instructions` (minutes, needs
 * valgrind): instructions per request of each API under callgrind, which the machine's load does
 * not move — the measure for a goal of a few percent on a shared machine.
 */
const PARTS = new Set((process.env.BENCH_PARTS ?? 'rps').split(','));

if (PARTS.has('instructions')) {
  if (!valgrindAvailable()) console.log('instructions per request: skipped (valgrind is not installed)');
  else {
    const post = (url: string, token?: string) =>
      fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body,
      }).then(
        (r) => r.status === 202,
        () => false,
      );
    // The control is a second API of the base on a database of its own, counted as a side.
    const apps = {} as Record<Name, CallgrindApp>;
    for (const [name, root, db] of [
      ['this', ROOT, 12],
      ['base', base.root, 13],
      ['control', base.root, 10],
    ] as const) {
      const token = await seedSide(name, root, db);
      const port = await freePort();
      const url = `http://127.0.0.1:${port}/api/messenger/v1/send`;
      apps[name] = {
        name,
        args: [path.join(root, 'services/api/dist/main.js')],
        env: { ...apiEnv(db), PORT: String(port), METRICS_PORT: String(await freePort()) },
        url,
        token,
        ready: () => post(url, token),
      };
    }
    if (BARE) {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}/api/messenger/v1/send`;
      apps.bare = {
        name: 'bare',
        args: [...BARE_ARGS, BARE_APP],
        env: { ...bareEnv(11), PORT: String(port) },
        url,
        ready: () => post(url),
      };
    }
    const counted = new SideBySide<Name>({
      baseline: 'base',
      control: 'control',
      others: BARE ? ['this', 'bare'] : ['this'],
      rounds: Number(process.env.BENCH_CG_ROUNDS ?? 1),
    });
    await instructionsSideBySide(counted, apps, body, ROOT);
    console.log(
      `instructions per POST /send (callgrind, 10 connections; ${counted.describe()}): this build against ` +
        `${base.name} (${base.commit.slice(0, 12)})`,
    );
    for (const [metric, label] of [
      ['total', 'instructions/request'],
      ['mainThread', 'main thread instructions/request'],
    ] as const)
      for (const line of counted.report({ metric, label, goals: { this: { max: 1.03 } } }))
        console.log(`  ${line}`);
  }
}

// Database 0 may be the bench's own; the sides take 14 and 15, the control 9, the bare app 11.
if (PARTS.has('rps')) {
  const sides = {
    this: await startSide('this', ROOT, 14),
    base: await startSide('base', base.root, 15),
    control: await startSide('control', base.root, 9),
    ...(BARE ? { bare: await startBare(11) } : {}),
  } as Record<Name, Side>;
  try {
    // warm-up: JIT, connections, scripts
    for (let i = 0; i < WARMUP; i++) for (const side of Object.values(sides)) await run(side);
    const rounds = new SideBySide<Name>({
      baseline: 'base',
      control: 'control',
      others: BARE ? ['this', 'bare'] : ['this'],
      rounds: ROUNDS,
    });
    await rounds.run(async (name) => {
      const r = await run(sides[name]);
      if (r.errors > 0) console.log(`  (${name} round had ${r.errors} non-2xx/errors)`);
      return { rps: r.rps, cpuUs: r.cpuUs };
    });
    console.log(
      `POST /send, 1 recipient, ${CONNECTIONS} connections, ${DURATION_S} s each, Node ${process.version}: ` +
        `this build against ${base.name} (${base.commit.slice(0, 12)})${BARE ? ' and bare express + a BullMQ job' : ''}; ` +
        rounds.describe(),
    );
    // Issue 70's goal: at most 3 % more API CPU per request than the base.
    for (const line of rounds.report({
      metric: 'cpuUs',
      label: 'API CPU µs/request',
      goals: { this: { max: 1.03 } },
    }))
      console.log(`  ${line}`);
    for (const line of rounds.report({ metric: 'rps', label: 'req/s' })) console.log(`  ${line}`);
    if (BARE) {
      console.log(`  req/s ${rounds.ratioText('this', 'rps', 'bare')}`);
      console.log(`  req/s ${rounds.ratioText('base', 'rps', 'bare')}`);
    }
  } finally {
    for (const side of Object.values(sides)) side.proc.kill('SIGTERM');
  }
}
