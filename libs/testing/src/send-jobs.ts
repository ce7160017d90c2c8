import { newMessageId, newPlatformMessageId, type SendJobData } from '@mgw/contracts';
import { Redis } from 'ioredis';
import { openBullJobs, openSendQueue, type BullJobs, type SendJobOptions, type SendQueue } from '@mgw/store';

/**
 * A send job for tests that add jobs themselves (the BullMQ door's and the accept script's): fresh
 * ids, link generation 3, enqueued now, with `extra` over it.
 */
export function sendJobData(deviceId: string, extra: Partial<SendJobData> = {}): SendJobData {
  return {
    kind: 'send',
    messageId: newMessageId(),
    platformMessageId: newPlatformMessageId(),
    deviceId,
    to: '15551234567',
    contentId: newMessageId(),
    linkGeneration: 3,
    enqueuedAt: Date.now(),
    ...extra,
  };
}

/** The options a send job `d` is added with (id, retries, retention), at `priority` and an optional `delay`. */
export function sendJobOptions(d: SendJobData, priority: number, delay?: number): SendJobOptions {
  return {
    jobId: d.messageId,
    priority,
    ...(delay !== undefined ? { delay } : {}),
    attempts: 5,
    backoff: { type: 'exponential', delay: 2000 },
    removeOnComplete: { age: 3600 },
    removeOnFail: { age: 604_800 },
  };
}

export interface TestSendQueue {
  /** A plain connection, for the test's own commands. */
  redis: Redis;
  /** The queue's connection (BullMQ's own). */
  bullRedis: Redis;
  queue: SendQueue;
  jobs: BullJobs;
  /** Obliterates the queue, closes it and both connections. */
  close(): Promise<void>;
}

/** A device's send queue on the suite's Redis, with the BullMQ door's job packer, for tests that add jobs themselves. */
export async function openTestSendQueue(deviceId: string): Promise<TestSendQueue> {
  const redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
  const bullRedis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
  const queue = openSendQueue(bullRedis, deviceId);
  const jobs = await openBullJobs(queue);
  return {
    redis,
    bullRedis,
    queue,
    jobs,
    async close() {
      await queue.obliterate({ force: true });
      await queue.close();
      await Promise.all([redis.quit(), bullRedis.quit()]);
    },
  };
}
