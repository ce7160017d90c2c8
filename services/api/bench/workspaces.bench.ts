/**
 * An install with many workspaces against one with one (issue 70: "an install with 1,000
 * workspaces of 10 devices each starts and serves /status as fast as one with one workspace").
 *
 * Databases of the same Redis server: `one` holds one workspace with BENCH_WS_DEVICES (10)
 * devices, `many` BENCH_WORKSPACES (1,000) workspaces of as many devices each; every device has a
 * connected session and its workspace's ownership, every workspace a workspace token, and a sample
 * of devices a device token. The API (built, as `npm start` runs it; no sender) is started on each
 * in turn, and on a second install of one workspace (the control: the noise floor), the order
 * rotating each round (libs/testing side-by-side.ts), BENCH_ROUNDS (3, rounded up to a multiple of
 * the sides) rounds: how long from its spawn until /readyz answers 200, then
 * GET /status with device tokens and GET /devices/{id}/status with workspace tokens
 * (autocannon, 10 connections, BENCH_SECONDS (4) s each): requests per second and the API's CPU per
 * request (from /proc). Printed: each figure for every install, many ÷ one and the control's ratio.
 * Nothing is asserted.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';
import { SessionStore, TokenStore, WorkspaceStore } from '@mgw/store';
import { entryArgs, freePort, requireFreshBuild, SideBySide, waitFor } from '@mgw/testing';
import { cpuMs } from './support/measure.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const WORKSPACES = Number(process.env.BENCH_WORKSPACES ?? 1000);
const DEVICES = Number(process.env.BENCH_WS_DEVICES ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
/** Devices (and workspaces) whose tokens the load uses. */
const SAMPLE = 20;
const BUILT = process.env.BENCH_SOURCES !== '1';
if (BUILT) requireFreshBuild();

const base = new URL(process.env.REDIS_URL!);
/** The Redis URL of database `db` of the bench's server. */
const urlOf = (db: number) => Object.assign(new URL(base.href), { pathname: `/${db}` }).href;

interface Install {
  name: 'one' | 'control' | 'many';
  url: string;
  deviceTokens: string[];
  workspaceTokens: { token: string; deviceId: string }[];
}

/** Writes an install of `workspaces` workspaces × DEVICES devices into database `db` (emptied first). */
async function seed(name: Install['name'], db: number, workspaces: number): Promise<Install> {
  const redis = new Redis(urlOf(db), { maxRetriesPerRequest: null, enableAutoPipelining: true });
  await redis.flushdb();
  const store = new WorkspaceStore(redis);
  const sessions = new SessionStore(redis);
  const tokens = new TokenStore(redis);
  const install: Install = { name, url: urlOf(db), deviceTokens: [], workspaceTokens: [] };
  const every = Math.max(1, Math.floor(workspaces / SAMPLE));
  for (let w = 0; w < workspaces; w += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, workspaces - w) }, async (_, k) => {
        const i = w + k;
        const id = `ws${i}`;
        await store.create({ id, name: `Customer ${i}` });
        const devices = Array.from({ length: DEVICES }, (_, d) => `w${i}d${d}`);
        for (const deviceId of devices) {
          await store.addDevice(id, deviceId);
          await sessions.update(deviceId, 'connected', {
            phone: `1555${String(i * DEVICES).padStart(7, '0')}`,
          });
          await redis.sadd(keys.linkedDevices(), deviceId);
        }
        const owner = await tokens.create({ name: 'owner', workspaceId: id });
        if (i % every === 0 || workspaces <= SAMPLE) {
          install.workspaceTokens.push({ token: owner.value, deviceId: devices[0]! });
          const device = await tokens.create({ name: 'device', workspaceId: id, deviceId: devices[1]! });
          install.deviceTokens.push(device.value);
        }
      }),
    );
  }
  const linked = await redis.scard(keys.linkedDevices());
  const indexed = await redis.scard(keys.workspaceIndex());
  console.log(`${name}: ${indexed} workspaces, ${linked} linked devices, ${await redis.dbsize()} keys`);
  await redis.quit();
  return install;
}

/** GET load over `paths` (path and token pairs, one connection each in turn). */
async function load(port: number, pid: number | undefined, requests: { path: string; token: string }[]) {
  const before = cpuMs(pid);
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: 10,
    duration: SECONDS,
    requests: requests.map((r) => ({
      method: 'GET' as const,
      path: r.path,
      headers: { authorization: `Bearer ${r.token}` },
    })),
  });
  const total = Math.max(1, result.requests.total);
  return {
    rps: result.requests.average,
    cpuUs: ((cpuMs(pid) - before) * 1000) / total,
    errors: result.non2xx + result.errors,
  };
}

type Figures = { startMs: number; deviceRps: number; deviceCpuUs: number; wsRps: number; wsCpuUs: number };

async function round(install: Install): Promise<Figures> {
  const port = await freePort();
  const opsPort = await freePort();
  const started = performance.now();
  const child: ChildProcess = spawn(process.execPath, entryArgs('services/api', 'main', BUILT), {
    cwd: ROOT,
    env: {
      ...process.env,
      REDIS_URL: install.url,
      HOST: '127.0.0.1',
      PORT: String(port),
      METRICS_PORT: String(opsPort),
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
      RATE_LIMIT_STATUS: '100000000',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    await waitFor(
      async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200,
      { timeoutMs: 120_000, intervalMs: 10, what: `the API on ${install.name}` },
    );
    const startMs = performance.now() - started;
    const device = await load(
      port,
      child.pid,
      install.deviceTokens.map((token) => ({ path: '/api/messenger/v1/status', token })),
    );
    const ws = await load(
      port,
      child.pid,
      install.workspaceTokens.map(({ token, deviceId }) => ({
        path: `/api/messenger/v1/devices/${deviceId}/status`,
        token,
      })),
    );
    if (device.errors + ws.errors > 0)
      console.log(`  ${install.name}: ${device.errors + ws.errors} answers were not 2xx`);
    return { startMs, deviceRps: device.rps, deviceCpuUs: device.cpuUs, wsRps: ws.rps, wsCpuUs: ws.cpuUs };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

const t0 = performance.now();
const one = await seed('one', 1, 1);
const many = await seed('many', 2, WORKSPACES);
console.log(
  `seeded: one workspace × ${DEVICES} devices, ${WORKSPACES} workspaces × ${DEVICES} devices ` +
    `(${((performance.now() - t0) / 1000).toFixed(0)} s)`,
);
// The control: a second install of one workspace, on a database of its own.
const control = await seed('control', 3, 1);
const installs = { one, control, many };
const rounds = new SideBySide<Install['name']>({
  baseline: 'one',
  control: 'control',
  others: ['many'],
  rounds: ROUNDS,
});
await rounds.run((name) => round(installs[name]));
const rows: [string, keyof Figures][] = [
  ['start to /readyz 200 (ms)', 'startMs'],
  ['GET /status, device token (req/s)', 'deviceRps'],
  ['GET /status, device token: API CPU per request (µs)', 'deviceCpuUs'],
  ['GET /devices/{id}/status, workspace token (req/s)', 'wsRps'],
  ['GET /devices/{id}/status, workspace token: API CPU per request (µs)', 'wsCpuUs'],
];
console.log(`\n${rounds.describe()}:`);
for (const [label, metric] of rows)
  for (const line of rounds.report({ metric, label, digits: 1 })) console.log(line);
for (const db of [1, 2, 3]) {
  const redis = new Redis(urlOf(db));
  await redis.flushdb();
  await redis.quit();
}
