import type { Job, JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { serializeError, type Logger } from '@mgw/common';
import {
  ERRORS,
  FAILURE_REASONS,
  type MessageRecord,
  type Metrics,
  type SendJobData,
  type SendJobResult,
} from '@mgw/contracts';
import { openSendQueue, type MessageStore, type SendQueue, type SessionStore } from '@mgw/store';
import { ApiError } from './api-error.js';
import { waitForJob, type JobOutcome, type QueueEventsPool } from './queue-events-pool.js';

const RECONCILE_DELAYS_MS = [0, 1000, 5000, 15_000, 60_000];

/**
 * The producer side of the per-device send queues. A message is its `queued` record plus its
 * job: records are written first (one MULTI), then the jobs (one addBulk, jobId = messageId).
 * If addBulk fails, every record whose job does not exist is marked failed, so no record claims
 * `queued` for a job that will never run. The device is checked before (by the route) and again
 * after the jobs are added: a logout that ran in between has already drained the device's queue,
 * so jobs that land after it would wait forever — they are withdrawn and the request gets 409.
 */
export class SendQueues {
  private readonly queues = new Map<string, SendQueue>();

  constructor(
    private readonly deps: {
      redis: Redis;
      /** Attempts and first backoff of a job; failed jobs are kept as long as message records. */
      jobs: { attempts: number; backoffMs: number; failedRetentionSeconds: number };
      messages: MessageStore;
      sessions: SessionStore;
      events: QueueEventsPool;
      metrics: Metrics;
      logger: Logger;
    },
  ) {}

  queue(deviceId: string): SendQueue {
    let q = this.queues.get(deviceId);
    if (!q) {
      q = openSendQueue(this.deps.redis, deviceId);
      q.on('error', (err) => this.deps.logger.warn('send queue error', { err: serializeError(err) }));
      this.queues.set(deviceId, q);
    }
    return q;
  }

  jobOptions(priority: number): JobsOptions {
    const { jobs } = this.deps;
    return {
      priority,
      attempts: jobs.attempts,
      backoff: { type: 'exponential', delay: jobs.backoffMs },
      // Finished jobs go; the message record (with its own retention) is the lasting trace.
      removeOnComplete: { age: 3600 },
      removeOnFail: { age: jobs.failedRetentionSeconds },
    };
  }

  /** Writes the `queued` records, then adds the jobs; both in the order given. */
  async enqueue(deviceId: string, jobs: SendJobData[], priority: number): Promise<Job<SendJobData>[]> {
    const { redis, messages, metrics } = this.deps;
    const records = jobs.map(toRecord);
    const multi = redis.multi();
    messages.addQueued(multi, records);
    const written = await multi.exec();
    if (!written) throw new Error('Redis transaction aborted');
    const failedWrite = written.find(([err]) => err)?.[0];
    if (failedWrite) throw failedWrite;

    const queue = this.queue(deviceId);
    const opts = this.jobOptions(priority);
    try {
      const added = await queue.addBulk(
        jobs.map((data) => ({ name: data.kind, data, opts: { ...opts, jobId: data.messageId } })),
      );
      metrics.jobsEnqueued.inc({ queue_type: 'send', kind: jobs[0]?.kind ?? 'send' }, jobs.length);
      if (!(await this.deps.sessions.acceptsMessages(deviceId))) {
        await this.withdraw(added, FAILURE_REASONS.loggedOut);
        throw new ApiError(409, ERRORS.noDevice);
      }
      return added;
    } catch (err) {
      if (err instanceof ApiError) throw err;
      this.reconcile(
        queue,
        deviceId,
        records.map((r) => r.messageId),
        0,
      );
      throw err;
    }
  }

  /** Removes jobs that must not run and marks their records failed (a job already taken is left to its worker). */
  private async withdraw(added: Job<SendJobData>[], reason: string): Promise<void> {
    for (const job of added) {
      const removed = await job.remove().then(
        () => true,
        () => false,
      );
      if (removed) await this.deps.messages.markFailed(job.data.deviceId, job.data.messageId, reason);
    }
    this.deps.logger.warn('device went away while its messages were enqueued; withdrawn', {
      count: added.length,
    });
  }

  /** Enqueues one job and waits (bounded) for its result; used by OTP. */
  sendAndWait(
    deviceId: string,
    job: SendJobData,
    priority: number,
    timeoutMs: number,
  ): Promise<JobOutcome<SendJobResult>> {
    const queue = this.queue(deviceId);
    return this.deps.events.use(queue, async (events) => {
      const [added] = await this.enqueue(deviceId, [job], priority);
      return waitForJob<SendJobResult>(queue, added!, events, timeoutMs);
    });
  }

  /**
   * addBulk may have failed before or after Redis ran it (a lost reply), so a record is marked
   * failed only when its job is not there. Redis may be what failed: retry for about a minute.
   */
  private reconcile(queue: SendQueue, deviceId: string, messageIds: string[], attempt: number): void {
    const delay = RECONCILE_DELAYS_MS[attempt];
    if (delay === undefined) {
      this.deps.logger.error('could not mark messages of a failed enqueue as failed', {
        count: messageIds.length,
      });
      return;
    }
    const timer = setTimeout(() => {
      void (async () => {
        const pipeline = this.deps.redis.pipeline();
        for (const id of messageIds) pipeline.exists(queue.toKey(id));
        const exists = (await pipeline.exec()) ?? [];
        const orphans = messageIds.filter((_, i) => {
          const [err, n] = exists[i] ?? [new Error('no reply')];
          if (err) throw err;
          return n === 0;
        });
        for (const id of orphans)
          await this.deps.messages.markFailed(deviceId, id, FAILURE_REASONS.enqueueFailed);
      })().catch((err: unknown) => {
        this.deps.logger.warn('retrying failed-enqueue cleanup', { attempt, err: serializeError(err) });
        this.reconcile(queue, deviceId, messageIds, attempt + 1);
      });
    }, delay);
    timer.unref();
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close().catch(() => undefined)));
    this.queues.clear();
  }
}

function toRecord(job: SendJobData): MessageRecord {
  return {
    messageId: job.messageId,
    deviceId: job.deviceId,
    to: job.to,
    status: 'queued',
    kind: job.kind,
    platformMessageId: job.platformMessageId,
    ...(job.batchId ? { batchId: job.batchId } : {}),
    createdAt: new Date(job.enqueuedAt).toISOString(),
  };
}
