import { Job, type JobsOptions } from 'bullmq';
import type { ChainableCommander, Redis } from 'ioredis';
import { serializeError, type Logger } from '@mgw/common';
import {
  ERRORS,
  FAILURE_REASONS,
  newMessageId,
  newPlatformMessageId,
  type MessageContent,
  type Metrics,
  type SendJobData,
  type SendJobResult,
} from '@mgw/contracts';
import {
  ContentStore,
  getDeviceState,
  openSendQueue,
  parseDeviceState,
  readDeviceState,
  stageQueued,
  type MessageStore,
  type SendQueue,
} from '@mgw/store';
import { ApiError } from './api-error.js';
import { waitForJob, type JobOutcome, type QueueEventsPool } from './queue-events-pool.js';

/** One request's messages: one content, one job per recipient. */
export interface SendRequest {
  deviceId: string;
  kind: SendJobData['kind'];
  recipients: string[];
  content: MessageContent;
  /** The attachment's bytes when the request carried them (base64). */
  media?: Buffer;
  batchId?: string;
  priority: number;
  /** OTP: no attempt starts after this time. */
  expiresAt?: number;
}

export interface SendQueuesOptions {
  /** The API's own commands (device state reads). */
  redis: Redis;
  /** BullMQ's connection: the transaction that adds jobs runs on it (it knows BullMQ's scripts). */
  bullRedis: Redis;
  /** Attempts and first backoff of a job; failed jobs are kept as long as message records. */
  jobs: { attempts: number; backoffMs: number; failedRetentionSeconds: number };
  quota: { maxQueuedMessages: number; maxQueuedBytes: number };
  messages: MessageStore;
  contents: ContentStore;
  events: QueueEventsPool;
  metrics: Metrics;
  logger: Logger;
}

const WITHDRAW_RETRY_MS = [0, 1000, 5000, 15_000, 60_000];

/**
 * The producer side of the per-device send queues. A request is accepted in one transaction: its
 * content stored once, the device's queue quota counted, one job per recipient (jobId =
 * messageId; a queued message has no other record), and — at the same instant, inside the
 * transaction — the device's state read again. A logout that ran between the first check and
 * the transaction has already purged the queue and started a new link generation, so jobs that
 * landed after it are withdrawn (records `failed` / `logged_out`) and the request gets 409.
 */
export class SendQueues {
  private readonly queues = new Map<string, SendQueue>();

  constructor(private readonly deps: SendQueuesOptions) {}

  queue(deviceId: string): SendQueue {
    let q = this.queues.get(deviceId);
    if (!q) {
      q = openSendQueue(this.deps.bullRedis, deviceId);
      q.on('error', (err) => this.deps.logger.warn('send queue error', { err: serializeError(err) }));
      this.queues.set(deviceId, q);
    }
    return q;
  }

  jobOptions(priority: number, messageId: string): JobsOptions {
    const { jobs } = this.deps;
    return {
      jobId: messageId,
      priority,
      attempts: jobs.attempts,
      backoff: { type: 'exponential', delay: jobs.backoffMs },
      // Finished jobs go; the message record (with its own retention) is the lasting trace.
      removeOnComplete: { age: 3600 },
      removeOnFail: { age: jobs.failedRetentionSeconds },
    };
  }

  /** Accepts a request's messages (409 no device, 429 quota, 503 storage); returns their jobs. */
  async accept(req: SendRequest): Promise<SendJobData[]> {
    const { deviceId } = req;
    const state = await getDeviceState(this.deps.redis, deviceId);
    if (!state.acceptsMessages) throw new ApiError(409, ERRORS.noDevice);
    const bytes = ContentStore.sizeOf(req.content, req.media);
    const { quota } = this.deps;
    if (
      state.queuedMessages + req.recipients.length > quota.maxQueuedMessages ||
      state.queuedBytes + bytes > quota.maxQueuedBytes
    ) {
      throw new ApiError(429, ERRORS.deviceQueueFull, undefined, {
        queued: { messages: state.queuedMessages, bytes: state.queuedBytes },
        limit: { messages: quota.maxQueuedMessages, bytes: quota.maxQueuedBytes },
      });
    }

    const contentId = newMessageId();
    const enqueuedAt = Date.now();
    const jobs: SendJobData[] = req.recipients.map((to) => ({
      kind: req.kind,
      messageId: newMessageId(),
      platformMessageId: newPlatformMessageId(),
      deviceId,
      to,
      contentId,
      ...(req.batchId ? { batchId: req.batchId } : {}),
      linkGeneration: state.linkGeneration,
      ...(req.expiresAt !== undefined ? { expiresAt: req.expiresAt } : {}),
      enqueuedAt,
    }));

    const queue = this.queue(deviceId);
    // BullMQ's own client: its job-adding scripts are defined on it.
    const multi = (await queue.getBackend().client).multi() as unknown as ChainableCommander;
    this.deps.contents.stage(multi, deviceId, contentId, req.content, jobs.length, req.media);
    stageQueued(multi, deviceId, jobs.length, bytes);
    for (const data of jobs) {
      const opts = this.jobOptions(req.priority, data.messageId);
      await new Job(queue, data.kind, data, opts, data.messageId).addJob(multi as never);
    }
    readDeviceState(multi, deviceId);
    let replies: [Error | null, unknown][];
    try {
      replies = (await multi.exec()) ?? [];
      const failed = replies.find(([err]) => err)?.[0];
      if (failed) throw failed;
    } catch (err) {
      // Refused as a whole (e.g. Redis out of memory): nothing was written. Any other failure may
      // be a lost reply that hides an applied transaction: make sure none of it is ever sent.
      if (!/EXECABORT/.test((err as Error).message)) this.withdrawLater(jobs, 0);
      throw err;
    }
    this.deps.metrics.jobsEnqueued.inc({ queue_type: 'send', kind: req.kind }, jobs.length);
    // The transaction's last three replies are the device's state at the moment it ran.
    const after = parseDeviceState(replies, replies.length - 3);
    if (!after.acceptsMessages || after.linkGeneration !== state.linkGeneration) {
      await this.withdraw(jobs, FAILURE_REASONS.loggedOut);
      this.deps.logger.warn('device went away while its messages were enqueued; withdrawn', {
        count: jobs.length,
      });
      throw new ApiError(409, ERRORS.noDevice);
    }
    return jobs;
  }

  /** Accepts one message and waits (bounded) for its result; used by OTP. */
  acceptAndWait(
    req: SendRequest,
    timeoutMs: number,
  ): Promise<{ job: SendJobData; outcome: JobOutcome<SendJobResult> }> {
    const queue = this.queue(req.deviceId);
    return this.deps.events.use(queue, async (events) => {
      const [job] = await this.accept(req);
      return { job: job!, outcome: await this.waitFor(job!, timeoutMs, events) };
    });
  }

  /** Waits (bounded) for a job already accepted. */
  async waitFor(
    job: SendJobData,
    timeoutMs: number,
    events?: Parameters<typeof waitForJob>[2],
  ): Promise<JobOutcome<SendJobResult>> {
    const queue = this.queue(job.deviceId);
    const added = await queue.getJob(job.messageId);
    if (!added) return { kind: 'timeout' };
    if (events) return waitForJob<SendJobResult>(queue, added, events, timeoutMs);
    return this.deps.events.use(queue, (ev) => waitForJob<SendJobResult>(queue, added, ev, timeoutMs));
  }

  /** Removes jobs that must not run and fails their messages (a job already taken is left to its worker). */
  async withdraw(jobs: SendJobData[], reason: string): Promise<void> {
    await Promise.all(
      jobs.map(async (job) => {
        await this.deps.messages.markFailed(job, reason);
        await this.queue(job.deviceId)
          .remove(job.messageId)
          .catch(() => 0);
      }),
    );
  }

  /**
   * After a failed transaction whose outcome is unknown: if it was applied (its content exists),
   * its messages are withdrawn (`enqueue_failed`); retried for about a minute, since Redis may be
   * what failed.
   */
  private withdrawLater(jobs: SendJobData[], attempt: number): void {
    const delay = WITHDRAW_RETRY_MS[attempt];
    const first = jobs[0];
    if (delay === undefined || !first) {
      if (first) this.deps.logger.error('could not check a failed enqueue', { count: jobs.length });
      return;
    }
    setTimeout(() => {
      this.deps.contents
        .exists(first.deviceId, first.contentId)
        .then((applied) => (applied ? this.withdraw(jobs, FAILURE_REASONS.enqueueFailed) : undefined))
        .catch((err: unknown) => {
          this.deps.logger.warn('retrying the check of a failed enqueue', {
            attempt,
            err: serializeError(err),
          });
          this.withdrawLater(jobs, attempt + 1);
        });
    }, delay).unref();
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close().catch(() => undefined)));
    this.queues.clear();
  }
}
