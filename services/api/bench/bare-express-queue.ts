/**
 * The accept bench's second baseline: the bare express app plus the one thing no gateway can
 * skip, a BullMQ job per message — `queue.add` on the same Redis, with the gateway's job options
 * and a job of the same shape carrying the text, and no store, auth, limits or encryption. What the gateway costs
 * beyond this is its own; what this costs beyond the bare app is BullMQ's and Redis's.
 */
import { randomUUID } from 'node:crypto';
import express from 'express';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';

const connection = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
const deviceId = process.env.BENCH_DEVICE!;
const queue = new Queue(`send-{${deviceId}}`, { connection, prefix: process.env.BENCH_PREFIX! });
const priority = Number(process.env.BENCH_PRIORITY);

const app = express();
app.post('/api/messenger/v1/send', express.json({ limit: '15mb' }), async (req, res) => {
  const body = req.body as { to?: unknown; text?: unknown } | undefined;
  if (!body || typeof body.to !== 'string') return void res.status(400).json({ success: false });
  const messageId = randomUUID();
  await queue.add(
    'send',
    {
      kind: 'send',
      messageId,
      platformMessageId: randomUUID(),
      deviceId,
      to: body.to,
      ...(typeof body.text === 'string' ? { text: body.text } : {}),
      contentId: messageId,
      linkGeneration: 0,
      enqueuedAt: Date.now(),
    },
    {
      jobId: messageId,
      priority,
      attempts: 5,
      backoff: { type: 'exponential', delay: 2000 },
      removeOnComplete: { age: 3600 },
      removeOnFail: { age: 604_800 },
    },
  );
  res.status(202).json({ success: true, messageId });
});
const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
process.on('SIGTERM', () =>
  server.close(() => void queue.close().then(() => connection.quit().finally(() => process.exit(0)))),
);
