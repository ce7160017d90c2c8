/**
 * The accept path against an earlier release, side by side in one run (issue 70: "the accept path
 * costs at most 3 % more CPU per request with workspaces, the accept bench before and after"):
 * POST /send to one recipient, this build's API and the API of BENCH_BASE (default the upgrade
 * base, UPGRADE_BASE_COMMIT: the release before workspaces), alternated in ABBA rounds under the
 * same load (autocannon, 10 connections). Printed: each one's API CPU per request (from /proc) and
 * req/s, and the ratios this ÷ base, round by round and their median.
 *
 * The base is built from the repository's history (libs/testing previous-version.ts: `git archive`,
 * `npm ci`, `npm run build`, cached in the temp directory; the upgrade test builds the same one).
 * Each API has a Redis database of its own on the bench's Redis, with its token and its connected
 * device written by its own release's stores, so neither reads the other's formats. Both run as
 * `npm start` runs the gateway (plain Node on the build; run `npm run build` first). Nothing is
 * asserted; ratios are printed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import {
  buildPreviousVersion,
  freePort,
  requireFreshBuild,
  UPGRADE_BASE_COMMIT,
  valgrindAvailable,
  waitFor,
} from '@mgw/testing';
import { instructionsPerRequest, type CallgrindApp } from './instructions.js';
import { cpuMs, median } from './support/measure.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const DURATION_S = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
/** Runs of each side before the measured rounds: V8 still optimises this build's path after one. */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const BASE = process.env.BENCH_BASE ?? UPGRADE_BASE_COMMIT;
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

interface Side {
  name: string;
  url: string;
  token: string;
  api: ChildProcess;
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
});

async function startSide(name: string, root: string, db: number): Promise<Side> {
  const token = await seedSide(name, root, db);
  const port = await freePort();
  const api = spawn(process.execPath, [path.join(root, 'services/api/dist/main.js')], {
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
  return { name, url: `http://127.0.0.1:${port}/api/messenger/v1/send`, token, api };
}

/** One run of the load against a side: its req/s and its API's CPU per request (µs). */
async function run(side: Side): Promise<{ rps: number; cpuUs: number; errors: number }> {
  const before = cpuMs(side.api.pid);
  const result = await autocannon({
    url: side.url,
    connections: CONNECTIONS,
    duration: DURATION_S,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${side.token}` },
    body,
  });
  const requests = Math.max(1, result.requests.total);
  return {
    rps: result.requests.average,
    cpuUs: ((cpuMs(side.api.pid) - before) * 1000) / requests,
    errors: result.non2xx + result.errors,
  };
}

/**
 * `rps` (default): CPU per request and req/s under load, ABBA; `instructions` (minutes, needs
 * valgrind): instructions per request of each API under callgrind, which the machine's load does
 * not move — the measure for a goal of a few percent on a shared machine.
 */
const PARTS = new Set((process.env.BENCH_PARTS ?? 'rps').split(','));

if (PARTS.has('instructions')) {
  if (!valgrindAvailable()) console.log('instructions per request: skipped (valgrind is not installed)');
  else {
    const apps: CallgrindApp[] = [];
    for (const [name, root, db] of [
      ['this', ROOT, 12],
      ['base', base.root, 13],
    ] as const) {
      const token = await seedSide(name, root, db);
      const port = await freePort();
      const url = `http://127.0.0.1:${port}/api/messenger/v1/send`;
      apps.push({
        name,
        args: [path.join(root, 'services/api/dist/main.js')],
        env: { ...apiEnv(db), PORT: String(port), METRICS_PORT: String(await freePort()) },
        url,
        token,
        ready: () =>
          fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
            body,
          }).then(
            (r) => r.status === 202,
            () => false,
          ),
      });
    }
    const counts = await instructionsPerRequest(apps, body, ROOT);
    const k = (n: number) => `${Math.round(n / 1000)}k`;
    const [mine, theirs] = [counts.this!, counts.base!];
    console.log(
      `instructions per POST /send (callgrind, 10 connections): this ${k(mine.total)} (main thread ${k(mine.mainThread)}), ` +
        `${base.name} ${k(theirs.total)} (main thread ${k(theirs.mainThread)}) → this ÷ base ${(mine.total / theirs.total).toFixed(3)} ` +
        `(main thread ${(mine.mainThread / theirs.mainThread).toFixed(3)})`,
    );
  }
}

// Database 0 may be the bench's own; the two sides take 14 and 15.
if (PARTS.has('rps')) {
  const sides = [await startSide('this', ROOT, 14), await startSide('base', base.root, 15)] as const;
  try {
    // warm-up: JIT, connections, scripts
    for (let i = 0; i < WARMUP; i++) for (const side of sides) await run(side);
    const got = {
      this: [] as { rps: number; cpuUs: number }[],
      base: [] as { rps: number; cpuUs: number }[],
    };
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
        const r = await run(side);
        if (r.errors > 0) console.log(`  (${side.name} round had ${r.errors} non-2xx/errors)`);
        got[side.name as 'this' | 'base'].push(r);
      }
    }
    const cpuRatios = got.this.map((r, i) => r.cpuUs / got.base[i]!.cpuUs);
    const rpsRatios = got.this.map((r, i) => r.rps / got.base[i]!.rps);
    const list = (xs: number[], digits = 0) => xs.map((x) => x.toFixed(digits)).join('/');
    console.log(
      `POST /send, 1 recipient, ${CONNECTIONS} connections, ${ROUNDS}×${DURATION_S}s each (ABBA), Node ${process.version}: ` +
        `this build against ${base.name} (${base.commit.slice(0, 12)})`,
    );
    console.log(
      `  API CPU per request: this ${list(got.this.map((r) => r.cpuUs))} µs, base ${list(got.base.map((r) => r.cpuUs))} µs ` +
        `→ this ÷ base, round by round ${list(cpuRatios, 3)} → median ${median(cpuRatios).toFixed(3)}`,
    );
    console.log(
      `  req/s: this ${list(got.this.map((r) => r.rps))}, base ${list(got.base.map((r) => r.rps))} ` +
        `→ this ÷ base, round by round ${list(rpsRatios, 3)} → median ${median(rpsRatios).toFixed(3)}`,
    );
  } finally {
    for (const side of sides) side.api.kill('SIGTERM');
  }
}
