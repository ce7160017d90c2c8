import { Queue } from 'bullmq';
import type { Logger, RedisClient } from '@mgw/common';
import { BULL_PREFIX, webhookQueueName, type WebhookJobData } from '@mgw/contracts';
import type { WebhookDeliveries } from '@mgw/store';

/** BullMQ states a legacy delivery job can wait in. */
const STATES = ['waiting', 'prioritized', 'active', 'delayed'] as const;

/**
 * Earlier notifiers kept each device's deliveries in a BullMQ queue of their own
 * (`webhookQueueName`). The first time a notifier serves a device, under the device's lease, the
 * jobs such a queue still holds (waiting, in flight, waiting for a retry) become the device's
 * retries — due when they were, with their attempts so far — and the queue is removed: an upgrade
 * loses no event (one cut off mid-attempt by the upgrade is sent again, with its `webhook-id`).
 */
export function legacyQueueAdopter(
  redis: RedisClient,
  store: WebhookDeliveries,
  leaseMs: number,
  logger: Logger,
): (deviceId: string, token: string) => Promise<void> {
  return async (deviceId, token) => {
    const name = webhookQueueName(deviceId);
    if ((await redis.exists(`${BULL_PREFIX}:${name}:meta`, `${BULL_PREFIX}:${name}:id`)) === 0) return;
    const queue = new Queue<WebhookJobData>(name, { connection: redis, prefix: BULL_PREFIX });
    queue.on('error', () => undefined);
    try {
      const jobs = (await queue.getJobs([...STATES])).filter((j) => j?.data?.id);
      jobs.sort((a, b) => a.timestamp - b.timestamp);
      const now = Date.now();
      for (const [i, job] of jobs.entries()) {
        const due = job.delay > 0 ? Math.max(now, job.timestamp + job.delay) : now + i;
        const ok = await store.schedule(
          deviceId,
          token,
          leaseMs,
          { event: job.data, attemptsMade: job.attemptsMade },
          due,
        );
        if (!ok) throw new Error('lease lost while moving a legacy webhook queue');
      }
      await queue.obliterate({ force: true });
      logger.info('legacy webhook queue moved to the device retries', { deviceId, jobs: jobs.length });
    } finally {
      await queue.close().catch(() => undefined);
    }
  };
}
