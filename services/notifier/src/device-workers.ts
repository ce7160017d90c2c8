import { Queue, Worker } from 'bullmq';
import type { RedisClient } from '@mgw/common';
import { serializeError, type Logger } from '@mgw/common';
import { BULL_PREFIX, webhookQueueName, type WebhookJobData } from '@mgw/contracts';
import { deliverEvent, type DeliveryDeps } from './delivery.js';
import { retryDelayMs, type RetrySchedule } from './retry-schedule.js';

export type WebhookQueue = Queue<WebhookJobData>;

export interface DeviceWorkersOptions {
  /** BullMQ's connection (maxRetriesPerRequest null). */
  connection: RedisClient;
  concurrency: number;
  retry: RetrySchedule;
  delivery: DeliveryDeps;
  logger: Logger;
}

/**
 * One delivery queue and worker per device with a webhook: a device's slow or dead endpoint only
 * ever occupies its own worker, so other devices' events go out at their own pace. BullMQ keeps
 * the jobs (waiting, active, delayed for a retry) in Redis: a notifier that dies — even by
 * SIGKILL — loses nothing; its active jobs come back after their lock expires.
 */
export class DeviceWorkers {
  private readonly workers = new Map<string, { worker: Worker<WebhookJobData>; queue: WebhookQueue }>();

  constructor(private readonly opts: DeviceWorkersOptions) {}

  /** The device's queue, its worker started if it was not. */
  queue(deviceId: string): WebhookQueue {
    let entry = this.workers.get(deviceId);
    if (!entry) {
      const { connection, concurrency, retry, delivery, logger } = this.opts;
      const log = logger.child({ deviceId });
      const name = webhookQueueName(deviceId);
      const queue = new Queue<WebhookJobData>(name, { connection, prefix: BULL_PREFIX });
      queue.on('error', (err) => log.warn('webhook queue error', { err: serializeError(err) }));
      const worker = new Worker<WebhookJobData>(
        name,
        (job) => deliverEvent(job, deviceId, { ...delivery, logger: log }),
        {
          connection,
          prefix: BULL_PREFIX,
          concurrency,
          // BullMQ renews a live attempt's lock every lockDuration/2, and an attempt is bounded by
          // the timeout: a lock a little longer than one attempt never lapses while the notifier
          // lives, and lets a dead notifier's attempt come back within ~lockDuration + 5 s.
          lockDuration: delivery.timeoutMs + 5_000,
          stalledInterval: 5_000,
          // A job whose notifier died mid-attempt is put back, not failed (at-least-once).
          maxStalledCount: 100,
          settings: { backoffStrategy: (attemptsMade: number) => retryDelayMs(retry, attemptsMade) },
        },
      );
      worker.on('error', (err) => log.warn('webhook worker error', { err: serializeError(err) }));
      entry = { worker, queue };
      this.workers.set(deviceId, entry);
    }
    return entry.queue;
  }

  /** Options every delivery job is added with. */
  jobOptions(deliveredRetentionSeconds: number) {
    return {
      attempts: this.opts.retry.attempts,
      backoff: { type: 'custom' },
      // Kept a while: an event read again from its outbox (after a crash) finds its job and is not re-sent.
      removeOnComplete: { age: deliveredRetentionSeconds, count: 10_000 },
      removeOnFail: { age: 7 * 24 * 3600 },
    };
  }

  /** Stops the workers of devices that no longer have a webhook. */
  async retain(deviceIds: Set<string>): Promise<void> {
    const gone = [...this.workers.keys()].filter((id) => !deviceIds.has(id));
    await Promise.all(gone.map((id) => this.close(id)));
  }

  devices(): string[] {
    return [...this.workers.keys()];
  }

  queues(): WebhookQueue[] {
    return [...this.workers.values()].map((e) => e.queue);
  }

  private async close(deviceId: string): Promise<void> {
    const entry = this.workers.get(deviceId);
    if (!entry) return;
    this.workers.delete(deviceId);
    await entry.worker.close().catch(() => undefined);
    await entry.queue.close().catch(() => undefined);
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.workers.keys()].map((id) => this.close(id)));
  }
}
