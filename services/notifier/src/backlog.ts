import type { RedisClient } from '@mgw/common';
import { keys, type Metrics } from '@mgw/contracts';
import type { DeviceWorkers } from './device-workers.js';

/**
 * The backlog gauge, read at scrape time: deliveries waiting, in flight, and delayed for a retry
 * over every device this process serves, plus events still unread in their outboxes.
 */
export async function collectBacklog(
  redis: RedisClient,
  workers: DeviceWorkers,
  metrics: Metrics,
): Promise<void> {
  const totals = { waiting: 0, active: 0, delayed: 0, outbox: 0 };
  const counts = await Promise.all(
    workers.queues().map((q) => q.getJobCounts('waiting', 'active', 'delayed')),
  );
  for (const c of counts) {
    totals.waiting += c.waiting ?? 0;
    totals.active += c.active ?? 0;
    totals.delayed += c.delayed ?? 0;
  }
  const lengths = await Promise.all(workers.devices().map((d) => redis.xlen(keys.eventOutbox(d))));
  totals.outbox = lengths.reduce((a, b) => a + b, 0);
  for (const [state, n] of Object.entries(totals)) metrics.webhookBacklog.set({ state }, n);
}
