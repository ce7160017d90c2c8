import { Cluster, type Redis } from 'ioredis';
import {
  PRIORITY,
  newMessageId,
  newPlatformMessageId,
  type MessageContent,
  type SendJobData,
} from '@mgw/contracts';
import { ContentStore, Encryption, openSendQueue, stageQueued, type SendQueue } from '@mgw/store';

/**
 * Puts messages on a device's queue the way the API accepts them (content once, quota counted,
 * one job per recipient), for tests that need waiting messages without going through the API.
 */
export async function queueMessages(opts: {
  redis: Redis | Cluster;
  deviceId: string;
  to: string[];
  content?: MessageContent;
  linkGeneration?: number;
  /** Extra job fields (e.g. `kind`, `expiresAt`). */
  job?: Partial<SendJobData>;
  /** Store content and quota but do not add the jobs yet (the test adds them when it wants). */
  hold?: boolean;
}): Promise<{ jobs: SendJobData[]; queue: SendQueue }> {
  const { redis, deviceId } = opts;
  const content = opts.content ?? { text: 'queued by a test' };
  const contentId = newMessageId();
  const jobs: SendJobData[] = opts.to.map((to) => ({
    kind: 'send',
    messageId: newMessageId(),
    platformMessageId: newPlatformMessageId(),
    deviceId,
    to,
    contentId,
    linkGeneration: opts.linkGeneration ?? 0,
    enqueuedAt: Date.now(),
    ...opts.job,
  }));
  const multi = redis.multi();
  new ContentStore(redis, Encryption.fromEnv(), 3600).stage(multi, deviceId, contentId, content, jobs.length);
  stageQueued(multi, deviceId, jobs.length, ContentStore.sizeOf(content));
  await multi.exec();
  const worker =
    redis instanceof Cluster
      ? redis.duplicate([], { redisOptions: { maxRetriesPerRequest: null } })
      : redis.duplicate({ maxRetriesPerRequest: null });
  const queue = openSendQueue(worker, deviceId);
  if (opts.hold) return { jobs, queue };
  await queue.addBulk(
    jobs.map((data) => ({ name: data.kind, data, opts: { jobId: data.messageId, priority: PRIORITY.send } })),
  );
  return { jobs, queue };
}
