/**
 * What the chat routes cost against GET /status (the goal: "each new endpoint answers
 * within the same per-request cost as GET /status"). The API in this process against REDIS_URL;
 * one device, connected, with BENCH_CHATS (20) chats of BENCH_CHAT_MESSAGES (20) messages each —
 * half written by the contact (recorded by the inbound store, as the sender records them), half
 * sent (claimed and marked sent, as the sender does) — so the chat index is written by the same
 * scripts as in production. For each route: Redis commands per request (MONITOR over
 * BENCH_SEQUENTIAL sequential requests: load-independent) and requests per second with
 * BENCH_CONNECTIONS (10) connections for BENCH_SECONDS (3) s, each beside GET /status's (the
 * ratio). Nothing is asserted.
 */
import autocannon from 'autocannon';
import { newMessageId, newPlatformMessageId } from '@mgw/contracts';
import { Blocklist, LabelStore } from '@mgw/store';
import { RedisMonitor } from '@mgw/testing';
import { createToken, freshDeviceId, markConnected, startApi } from '../test/helpers/api.js';

const CHATS = Number(process.env.BENCH_CHATS ?? 20);
const PER_CHAT = Number(process.env.BENCH_CHAT_MESSAGES ?? 20);
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 50);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);

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

const routes: [string, string][] = [
  ['GET /status', '/status'],
  ['GET /chats?limit=20', '/chats?limit=20'],
  ['GET /chats/:chatId/messages?limit=50', `/chats/15553000000/messages?limit=50`],
  ['GET /settings', '/settings'],
  ['GET /blocklist', '/blocklist'],
  ['GET /labels', '/labels'],
  ['GET /chats/:chatId/labels', '/chats/15553000000/labels'],
  // The peer of a chat's page: the device's messages, a page of the same size.
  ['GET /messages?limit=50', '/messages?limit=50'],
];
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

async function throughput(path: string): Promise<{ rps: number; p50: number; p99: number }> {
  const r = await autocannon({
    url: `${t.api}${path}`,
    headers,
    connections: CONNECTIONS,
    duration: SECONDS,
  });
  if (r.non2xx > 0) throw new Error(`${path}: ${r.non2xx} answers were not 2xx`);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
}

const results: { name: string; commands: number; sent: number; rps: number; p50: number; p99: number }[] = [];
for (const [name, path] of routes) {
  const { commands, sent } = await commandsPerRequest(path);
  const { rps, p50, p99 } = await throughput(path);
  results.push({ name, commands, sent, rps, p50, p99 });
}
const status = results[0]!;
console.log(`${CHATS} chats × ${PER_CHAT} messages; ${CONNECTIONS} connections, ${SECONDS} s per route`);
for (const r of results) {
  console.log(
    `${r.name.padEnd(40)} ${r.commands.toFixed(1).padStart(6)} Redis commands/request (×${(r.commands / status.commands).toFixed(2)} of /status; ${r.sent.toFixed(1)} sent, the rest by scripts)` +
      `  ${Math.round(r.rps).toString().padStart(6)} req/s (×${(r.rps / status.rps).toFixed(2)})  p50 ${r.p50} ms  p99 ${r.p99} ms`,
  );
}
await t.close();
