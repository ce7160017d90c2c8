/**
 * `npm run bench -- media-list`: Redis memory per recipient of a 1,000-recipient list that sends one
 * uploaded 5 MB attachment by id (POST /media, then `attachment.mediaId`), against a text-only list
 * of 1,000 in the same run (the baseline), and, for contrast, the same 5 MB sent as base64 in the
 * request (stored once per request, inside its content). Issue 42's goal: the uploaded attachment's
 * list grows Redis per recipient by the text-only figure.
 *
 * The API runs in this process (the real app and Redis, no sender: the lists stay queued while
 * measured), with the Redis media store (no MEDIA_STORE: the upload's 5 MB are in Redis, before the
 * list, and not counted in its growth). Each list goes to a device of its own, and what it adds is
 * the growth of that device's keys (MEMORY USAGE, exact). Each kind runs ROUNDS times (3);
 * medians are printed. Nothing is asserted.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createLogger, createRedis, closeRedis } from '@mgw/common';
import { createMetrics } from '@mgw/contracts';
import { Encryption, SessionStore, TokenStore, markLinked } from '@mgw/store';
import { loadApiConfig } from '../src/config.js';
import { createApiServices } from '../src/api-services.js';
import { API_BASE, createApp } from '../src/app.js';
import { createHttpServer } from '../src/http/server.js';

const RECIPIENTS = 1000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const FILE_BYTES = 5 * 1024 * 1024;

const config = loadApiConfig({ ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'error' });
config.rateLimits.send = 1_000_000;
config.rateLimits.media = 1_000_000;
const logger = createLogger({ level: 'error', service: 'bench' });
const redis = createRedis(config.redis.url, 'producer', 'bench');
const bullRedis = createRedis(config.redis.url, 'producer', 'bench-bull');
const subscriber = createRedis(config.redis.url, 'subscriber', 'bench-sub');
const services = createApiServices({
  config,
  logger,
  redis,
  bullRedis,
  subscriber,
  metrics: createMetrics(),
  encryption: Encryption.fromConfig(config.encryption),
});
await services.start();
const server = createHttpServer(createApp(services), config.http, logger, services.metrics);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}${API_BASE}`;

const file = randomBytes(FILE_BYTES);
const base64 = file.toString('base64');

/** A fresh device (connected, linked) and its token: each list is measured on its own device. */
async function freshDevice(): Promise<{ deviceId: string; auth: Record<string, string> }> {
  const deviceId = `bench-media-${randomBytes(4).toString('hex')}`;
  await new SessionStore(redis).update(deviceId, 'connected', { phone: '15550001111', name: 'Bench' });
  await markLinked(redis, deviceId);
  const { value: token } = await new TokenStore(redis).create({ name: 'bench', deviceId });
  return { deviceId, auth: { authorization: `Bearer ${token}` } };
}

async function upload(auth: Record<string, string>): Promise<string> {
  const up = await fetch(`${api}/media?filename=brochure.pdf`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/pdf' },
    body: file,
  });
  return ((await up.json()) as { data: { mediaId: string } }).data.mediaId;
}

/**
 * What a device holds in Redis: the sum of MEMORY USAGE (every element counted, SAMPLES 0) of its
 * keys — its records, content, index and send queue (`*{deviceId}*`). Exact and free of what the
 * rest of Redis does meanwhile (its keyspace table doubling, client buffers).
 */
async function deviceBytes(deviceId: string): Promise<number> {
  let total = 0;
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `*{${deviceId}}*`, 'COUNT', 1000);
    cursor = next;
    const sizes = await Promise.all(found.map((k) => redis.memory('USAGE', k, 'SAMPLES', 0)));
    for (const n of sizes) total += Number(n ?? 0);
  } while (cursor !== '0');
  return total;
}

const to = Array.from({ length: RECIPIENTS }, (_, i) => `1555${String(i).padStart(7, '0')}`);
const TEXT = 'Our new brochure is out: ask us for a copy';
const bodies: Record<string, (mediaId: string) => unknown> = {
  'text only': () => ({ to, text: TEXT }),
  'uploaded 5 MB by mediaId': (mediaId) => ({ to, text: TEXT, attachment: { type: 'document', mediaId } }),
  '5 MB as base64 (before)': () => ({
    to,
    text: TEXT,
    attachment: { type: 'document', base64, mimeType: 'application/pdf', filename: 'brochure.pdf' },
  }),
};

const perRecipient: Record<string, number[]> = Object.fromEntries(Object.keys(bodies).map((k) => [k, []]));
const devices: string[] = [];
for (let round = 0; round < ROUNDS; round++) {
  for (const [kind, body] of Object.entries(bodies)) {
    const { deviceId, auth } = await freshDevice();
    devices.push(deviceId);
    // The upload is made before the list: it is the file's one copy, not the list's growth.
    const mediaId = kind.includes('mediaId') ? await upload(auth) : '';
    const before = await deviceBytes(deviceId);
    const res = await fetch(`${api}/send`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(body(mediaId)),
    });
    if (res.status !== 202) throw new Error(`${kind}: ${res.status} ${await res.text()}`);
    perRecipient[kind]!.push(((await deviceBytes(deviceId)) - before) / RECIPIENTS);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const text = median(perRecipient['text only']!);
console.log(`Redis growth per recipient of a ${RECIPIENTS}-recipient list (median of ${ROUNDS}):`);
for (const [kind, xs] of Object.entries(perRecipient)) {
  const m = median(xs);
  console.log(
    `  ${kind.padEnd(26)} ${m.toFixed(0).padStart(7)} B/recipient   ratio to text only: ${(m / text).toFixed(2)}`,
  );
}

for (const deviceId of devices) await services.acceptor.queue(deviceId).obliterate({ force: true });
server.closeAllConnections();
await new Promise<void>((resolve) => server.close(() => resolve()));
await services.close();
await closeRedis(subscriber, bullRedis, redis);
