/**
 * What the chat routes cost against GET /status (the issue's goal: "each new endpoint answers
 * within the same per-request cost as GET /status"). The API in this process against REDIS_URL;
 * one device, connected, with BENCH_CHATS (20) chats of BENCH_CHAT_MESSAGES (20) messages each —
 * half written by the contact (recorded by the inbound store, as the sender records them), half
 * sent (their request's content staged, claimed and marked sent, as the API and the sender do) —
 * so the chat index is written by the same scripts as in production. For each route: Redis
 * commands per request (MONITOR over BENCH_SEQUENTIAL sequential requests: load-independent) and
 * requests per second with BENCH_CONNECTIONS (10) connections for BENCH_SECONDS (3) s, in
 * BENCH_ROUNDS (3) rounds of GET /status, GET /status again (the control: its ratio to the first
 * is the noise floor printed beside each ratio) and the route, the order rotating each round (the
 * median of the rounds' ratios: the shared machine's slower stretches weigh on all). The page
 * routes are measured again on an API with the opened-text cache off (OPENED_TEXT_CACHE_MB=0).
 * BENCH_ROUTES picks routes by parts of their names (comma-separated). Nothing is asserted.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { newMessageId, newPlatformMessageId } from '@mgw/contracts';
import { Blocklist, LabelStore } from '@mgw/store';
import { RedisMonitor, SideBySide } from '@mgw/testing';
import { createToken, freshDeviceId, markConnected, startApi } from '../test/helpers/api.js';

const CHATS = Number(process.env.BENCH_CHATS ?? 20);
const PER_CHAT = Number(process.env.BENCH_CHAT_MESSAGES ?? 20);
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 50);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const t = await startApi({
  rateLimits: { status: 1e9, messages: 1e9, webhook: 1e9, account: 1e9, groups: 1e9 },
});
const deviceId = freshDeviceId();
const token = await createToken(t, { deviceId });
await markConnected(t.redis, deviceId);
const base = Date.now() - 3_600_000;
for (let c = 0; c < CHATS; c++) {
  const phone = `1555300${String(c).padStart(4, '0')}`;
  for (let m = 0; m < PER_CHAT; m++) {
    const at = new Date(base + c * 60_000 + m * 1000);
    if (m % 2 === 0) {
      await t.services.inbound.record(deviceId, {
        platformMessageId: newPlatformMessageId(),
        from: phone,
        contact: { phone },
        text: `question ${m} from ${phone}`,
        receivedAt: at,
        waKey: { remoteJid: `${phone}@s.whatsapp.net` },
      });
    } else {
      const job = {
        kind: 'send' as const,
        messageId: newMessageId(),
        platformMessageId: newPlatformMessageId(),
        deviceId,
        to: phone,
        contentId: newMessageId(),
        linkGeneration: 0,
        enqueuedAt: at.getTime(),
      };
      // Its request's content, as the API stages it on accepting: what the pages show of it.
      const staged = t.redis.multi();
      t.services.contents.stage(staged, deviceId, job.contentId, { text: `answer ${m} to ${phone}` }, 1);
      await staged.exec();
      await t.services.messages.claim(job);
      await t.services.messages.markSent(job, at);
    }
  }
}

// The other routes of the account that answer from Redis: a blocklist of 50 and 10 labels on the chats.
await new Blocklist(t.redis).add(
  deviceId,
  Array.from({ length: 50 }, (_, i) => `1555390${String(i).padStart(4, '0')}@s.whatsapp.net`),
);
const labels = new LabelStore(t.redis, t.services.encryption);
for (let l = 1; l <= 10; l++) {
  await labels.edit(deviceId, { id: String(l), name: `Label ${l}`, color: l, deleted: false });
  for (let c = 0; c < CHATS; c += 2)
    await labels.associate(deviceId, String(l), `1555300${String(c).padStart(4, '0')}`, true);
}

const allRoutes: [string, string][] = [
  ['GET /status', '/status'],
  ['GET /chats?limit=20', '/chats?limit=20'],
  ['GET /chats/:chatId/messages?limit=50', `/chats/15553000000/messages?limit=50`],
  // Smaller pages: what a page costs by its size (the fixed part against the part per item).
  ['GET /chats?limit=10', '/chats?limit=10'],
  ['GET /chats?limit=5', '/chats?limit=5'],
  ['GET /chats/:chatId/messages?limit=10', `/chats/15553000000/messages?limit=10`],
  ['GET /chats/:chatId/messages?limit=5', `/chats/15553000000/messages?limit=5`],
  ['GET /settings', '/settings'],
  ['GET /blocklist', '/blocklist'],
  ['GET /labels', '/labels'],
  ['GET /chats/:chatId/labels', '/chats/15553000000/labels'],
  // The peer of a chat's page: the device's messages, a page of the same size.
  ['GET /messages?limit=50', '/messages?limit=50'],
];
/** BENCH_ROUTES (comma-separated parts of their names) measures only those routes. */
const only = process.env.BENCH_ROUTES?.split(',');
const routes = allRoutes.filter(([name]) => !only || only.some((part) => name.includes(part)));
/** The routes that open a page of texts (measured again with the opened-text cache off). */
const PAGES = ['GET /chats?limit=20', 'GET /chats/:chatId/messages?limit=50', 'GET /messages?limit=50'];
const headers = { authorization: `Bearer ${token}` };

/**
 * Redis commands per request over sequential requests: every command Redis ran for the API's
 * connections, and of those the ones the API sent (the rest ran inside its scripts).
 */
async function commandsPerRequest(path: string): Promise<{ commands: number; sent: number }> {
  let count = 0;
  let sent = 0;
  const monitor = await RedisMonitor.start(t.config.redis.url, (_args, byScript) => {
    count++;
    if (!byScript) sent++;
  });
  await new Promise((r) => setTimeout(r, 200));
  const before = count;
  const sentBefore = sent;
  for (let i = 0; i < SEQUENTIAL; i++) {
    const res = await fetch(`${t.api}${path}`, { headers });
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
  }
  await new Promise((r) => setTimeout(r, 200));
  const n = count - before;
  const m = sent - sentBefore;
  monitor.close();
  return { commands: n / SEQUENTIAL, sent: m / SEQUENTIAL };
}

/** Redis's CPU time so far (user + system, µs): what a route costs the one shared server. */
async function redisCpuMicros(): Promise<number> {
  const info = await t.redis.info('cpu');
  const field = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1e6;
}

/** autocannon's command line: the client runs in its own process, so this one's CPU is the API's. */
const AUTOCANNON = createRequire(import.meta.url).resolve('autocannon/autocannon.js');

interface Throughput {
  rps: number;
  p50: number;
  p99: number;
  /** CPU time of this process (the API: express, the views, ioredis) per request, µs. */
  apiMicros: number;
  /** CPU time of Redis per request, µs. */
  redisMicros: number;
}

async function throughput(api: string, path: string): Promise<Throughput> {
  const redisBefore = await redisCpuMicros();
  const apiBefore = process.cpuUsage();
  const { stdout } = await execFileAsync(process.execPath, [
    AUTOCANNON,
    '--json',
    '-c',
    String(CONNECTIONS),
    '-d',
    String(SECONDS),
    '-H',
    `authorization=${headers.authorization}`,
    `${api}${path}`,
  ]);
  const api_ = process.cpuUsage(apiBefore);
  const redisMicros = (await redisCpuMicros()) - redisBefore;
  const r = JSON.parse(stdout) as {
    non2xx: number;
    requests: { average: number; total: number };
    latency: { p50: number; p99: number };
  };
  if (r.non2xx > 0) throw new Error(`${path}: ${r.non2xx} answers were not 2xx`);
  const total = Math.max(1, r.requests.total);
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    apiMicros: (api_.user + api_.system) / total,
    redisMicros: redisMicros / total,
  };
}

const execFileAsync = promisify(execFile);

/**
 * A route's req/s against /status's: ROUNDS rounds of /status (the baseline), /status again (the
 * control) and the route, the order rotating each round (libs/testing side-by-side.ts), so a slower
 * stretch of the shared machine weighs on all; the median of the rounds' ratios, and the control's
 * ratio as the noise floor.
 */
async function againstStatus(api: string, path: string) {
  const rounds = new SideBySide<'status' | 'control' | 'route'>({
    baseline: 'status',
    control: 'control',
    others: ['route'],
    rounds: ROUNDS,
  });
  await rounds.run(async (side) => {
    const r = await throughput(api, side === 'route' ? path : '/status');
    return { ...r, cost: r.apiMicros + r.redisMicros };
  });
  const of = (metric: string) => rounds.median('route', metric);
  return {
    ratio: rounds.ratio('route', 'rps'),
    rpsFloor: rounds.floor('rps'),
    rps: of('rps'),
    p50: of('p50'),
    p99: of('p99'),
    apiMicros: of('apiMicros'),
    redisMicros: of('redisMicros'),
    statusApiMicros: rounds.median('status', 'apiMicros'),
    statusRedisMicros: rounds.median('status', 'redisMicros'),
    /** API + Redis CPU per request against /status's (the per-request cost, load-independent). */
    costRatio: rounds.ratio('route', 'cost'),
    costFloor: rounds.floor('cost'),
  };
}

const fmt = (x: number) => x.toFixed(2);
const cpu = (r: Awaited<ReturnType<typeof againstStatus>>) =>
  `CPU/request: API ${Math.round(r.apiMicros)} µs + Redis ${Math.round(r.redisMicros)} µs ` +
  `(/status ${Math.round(r.statusApiMicros)} + ${Math.round(r.statusRedisMicros)}; ×${fmt(r.costRatio)}, ` +
  `floor ±${(r.costFloor * 100).toFixed(0)} %)`;
console.log(
  `${CHATS} chats × ${PER_CHAT} messages; ${CONNECTIONS} connections, ${SECONDS} s per measure, ` +
    `${ROUNDS} rounds (rounded up to a multiple of 3) of /status, /status again (the control: its ratio ` +
    `is the floor) and the route, the order rotated (medians), the client in its own process`,
);
const status = await commandsPerRequest('/status');
/** Each measured route's CPU per request against /status's, by name (for the page-size fit). */
const costs = new Map<string, number>();
for (const [name, path] of routes) {
  const { commands, sent } = await commandsPerRequest(path);
  const r = await againstStatus(t.api, path);
  costs.set(name, r.costRatio);
  console.log(
    `${name.padEnd(38)} Redis commands ${commands.toFixed(1).padStart(5)} (${sent.toFixed(1)} sent; ×${fmt(commands / status.commands)})` +
      `  ${Math.round(r.rps).toString().padStart(5)} req/s (×${fmt(r.ratio)}, floor ±${(r.rpsFloor * 100).toFixed(0)} %), p50 ${r.p50} ms, p99 ${r.p99} ms  ${cpu(r)}`,
  );
}

// A page's cost as a fixed part and a part per item (in /status requests), from its 5-item page
// and its full one (20 chats; a chat's 20 messages): the page size that costs one /status request.
for (const [page, five, full, items] of [
  ['GET /chats', 'GET /chats?limit=5', 'GET /chats?limit=20', Math.min(CHATS, 20)],
  [
    "a chat's messages",
    'GET /chats/:chatId/messages?limit=5',
    'GET /chats/:chatId/messages?limit=50',
    Math.min(PER_CHAT, 50),
  ],
] as const) {
  const a = costs.get(five);
  const b = costs.get(full);
  if (a === undefined || b === undefined || items <= 5) continue;
  const perItem = (b - a) / (items - 5);
  const fixed = a - 5 * perItem;
  console.log(
    `${page}: ×${fmt(fixed)} + ×${perItem.toFixed(3)} per item of /status's CPU; one /status request's ` +
      `cost at ${perItem > 0 ? Math.floor((1 - fixed) / perItem) : '∞'} items`,
  );
}

// The pages again with nothing opened kept (OPENED_TEXT_CACHE_MB=0): every text decrypted per request.
const cold = await startApi({
  rateLimits: { status: 1e9, messages: 1e9, webhook: 1e9, account: 1e9, groups: 1e9 },
  openedTextCacheBytes: 0,
});
for (const [name, path] of routes.filter(([n]) => PAGES.includes(n))) {
  const r = await againstStatus(cold.api, path);
  console.log(
    `${`${name}, cache off`.padEnd(38)} ${Math.round(r.rps).toString().padStart(5)} req/s (×${fmt(r.ratio)}, floor ±${(r.rpsFloor * 100).toFixed(0)} %), p50 ${r.p50} ms, p99 ${r.p99} ms  ${cpu(r)}`,
  );
}
await cold.close();
await t.close();
