import { Job, type JobsOptions } from 'bullmq';
import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import {
  ERRORS,
  FAILURE_REASONS,
  newMessageId,
  newPlatformMessageId,
  type MessageContent,
  type Metrics,
  type RecipientVars,
  type SendJobData,
} from '@mgw/contracts';
import {
  ContentStore,
  openSendQueue,
  parseDeviceState,
  readDeviceState,
  type BatchStore,
  type DeviceState,
  type JobTransaction,
  type MessageIndex,
  type MessageStore,
  type SendQueue,
  DEVICE_STATE_REPLIES,
} from '@mgw/store';
import { ApiError } from '../http/api-error.js';

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
  /** A personalised list: each recipient's variables, in `recipients` order (only those the content uses). */
  vars?: RecipientVars[];
  /** A scheduled send: its jobs are delayed until this time (epoch ms). */
  sendAt?: number;
}

/** Bytes a request counts against the device's quota: its content, and a personalised list's variables. */
export function requestSize(req: SendRequest): number {
  return ContentStore.sizeOf(req.content, req.media) + (req.vars ? ContentStore.varsSize(req.vars) : 0);
}

/** What accepting a request writes with, and to. */
export interface AcceptDeps {
  /**
   * The API's own connection: device state reads, and the transactions that add jobs (BullMQ's
   * job-adding scripts are defined on it, see `jobTransaction`).
   */
  redis: RedisClient;
  /** BullMQ's connection (queues, job lookups and removals). */
  bullRedis: RedisClient;
  /** Attempts and first backoff of a job; failed jobs are kept as long as message records. */
  jobs: { attempts: number; backoffMs: number; failedRetentionSeconds: number };
  quota: { maxQueuedMessages: number; maxQueuedBytes: number };
  messages: MessageStore;
  /** A list's counts, written with its messages. */
  batches: BatchStore;
  /** The order GET /messages lists messages in, written with them. */
  index: MessageIndex;
  contents: ContentStore;
  metrics: Metrics;
  logger: Logger;
}

const WITHDRAW_RETRY_MS = [0, 1000, 5000, 15_000, 60_000];
/** Jobs built between two yields to the event loop. */
const JOBS_PER_SLICE = 100;

/**
 * What both ways of accepting share (one transaction for a group of requests, several for a long
 * list): the devices' send queues, the quota check, a request's jobs (jobId = messageId; a queued
 * message has no other record), and the transaction that adds them — with the device's state read
 * again at its end, so jobs that landed after a logout are withdrawn (records `failed` /
 * `logged_out`) and the request gets 409.
 */
export class JobWriter {
  private readonly queues = new Map<string, SendQueue>();

  constructor(private readonly deps: AcceptDeps) {}

  queue(deviceId: string): SendQueue {
    let q = this.queues.get(deviceId);
    if (!q) {
      q = openSendQueue(this.deps.bullRedis, deviceId);
      q.on('error', (err) => this.deps.logger.warn('send queue error', { err: serializeError(err) }));
      // Every OTP waiting for its result adds a 'closing' listener here (BullMQ's
      // waitUntilFinished), taken off when its wait ends: many at once are not a leak.
      q.setMaxListeners(0);
      this.queues.set(deviceId, q);
    }
    return q;
  }

  /** Why the device cannot take `messages` more messages of `bytes` now, if it cannot. */
  refusal(
    state: DeviceState,
    queued: number,
    queuedBytes: number,
    messages: number,
    bytes: number,
  ): ApiError | undefined {
    if (!state.acceptsMessages) return new ApiError(409, ERRORS.noDevice);
    const { quota } = this.deps;
    if (queued + messages > quota.maxQueuedMessages || queuedBytes + bytes > quota.maxQueuedBytes) {
      return new ApiError(429, ERRORS.deviceQueueFull, undefined, {
        queued: { messages: queued, bytes: queuedBytes },
        limit: { messages: quota.maxQueuedMessages, bytes: quota.maxQueuedBytes },
      });
    }
    return undefined;
  }

  jobsOf(req: SendRequest, recipients: string[], contentId: string, state: DeviceState): SendJobData[] {
    const enqueuedAt = Date.now();
    return recipients.map((to) => ({
      kind: req.kind,
      messageId: newMessageId(),
      platformMessageId: newPlatformMessageId(),
      deviceId: req.deviceId,
      to,
      contentId,
      ...(req.batchId ? { batchId: req.batchId } : {}),
      linkGeneration: state.linkGeneration,
      ...(req.expiresAt !== undefined ? { expiresAt: req.expiresAt } : {}),
      enqueuedAt,
      ...(req.sendAt !== undefined ? { sendAt: req.sendAt } : {}),
    }));
  }

  /**
   * Adds what a request's jobs share to the transaction that adds them: the variables of the
   * recipients `jobs` stand for (those from `from` in `req.recipients`), and its list's counts.
   */
  stagePerMessage(tx: JobTransaction, req: SendRequest, from: number, jobs: SendJobData[]): void {
    const { vars } = req;
    if (vars)
      this.deps.contents.stageVars(
        tx,
        req.deviceId,
        jobs[0]!.contentId,
        jobs.map((j, i) => ({ messageId: j.messageId, vars: vars[from + i]! })),
      );
    if (req.batchId)
      this.deps.batches.stage(tx, req.deviceId, req.batchId, jobs.length, undefined, req.sendAt);
  }

  async addJobs(tx: JobTransaction, jobs: SendJobData[], priority: number): Promise<void> {
    const queue = this.queue(jobs[0]!.deviceId);
    for (const [i, data] of jobs.entries()) {
      // ~40 µs a job: let other requests run every so often while a big piece is built.
      if (i > 0 && i % JOBS_PER_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
      await new Job(queue, data.kind, data, this.jobOptions(priority, data), data.messageId).addJob(
        tx as never,
      );
    }
  }

  private jobOptions(priority: number, data: SendJobData): JobsOptions {
    const { jobs } = this.deps;
    // A scheduled send waits as a delayed job (in Redis: it survives any process) until it is due.
    const delay = data.sendAt === undefined ? 0 : Math.max(0, data.sendAt - Date.now());
    return {
      jobId: data.messageId,
      priority,
      ...(delay > 0 ? { delay } : {}),
      attempts: jobs.attempts,
      backoff: { type: 'exponential', delay: jobs.backoffMs },
      // Finished jobs go; the message record (with its own retention) is the lasting trace.
      removeOnComplete: { age: 3600 },
      removeOnFail: { age: jobs.failedRetentionSeconds },
    };
  }

  /**
   * Runs a transaction that adds `jobs`, with the device's state read at its end. Refused as a
   * whole (EXECABORT: e.g. Redis out of memory) nothing was written; any other failure may be a
   * lost reply that hides an applied transaction, so `applied` is asked (retrying for about a
   * minute) and the jobs are withdrawn if it was. A device that went away meanwhile (logout: a new
   * link generation) gets its jobs withdrawn and the request 409.
   */
  async commit(
    tx: JobTransaction,
    jobs: SendJobData[],
    state: DeviceState,
    applied: () => Promise<boolean>,
  ): Promise<DeviceState> {
    readDeviceState(tx, jobs[0]!.deviceId);
    let replies: [Error | null, unknown][];
    try {
      replies = (await tx.exec()) ?? [];
      const failed = replies.find(([err]) => err)?.[0];
      if (failed) throw failed;
    } catch (err) {
      if (!/EXECABORT/.test((err as Error).message)) this.withdrawLater(jobs, applied, 0);
      throw err;
    }
    this.deps.metrics.jobsEnqueued.inc({ queue_type: 'send', kind: jobs[0]!.kind }, jobs.length);
    // The transaction's last replies are the device's state at the moment it ran.
    const after = parseDeviceState(replies, replies.length - DEVICE_STATE_REPLIES);
    if (!after.acceptsMessages || after.linkGeneration !== state.linkGeneration) {
      await this.withdraw(jobs, FAILURE_REASONS.loggedOut);
      this.deps.logger.warn('device went away while its messages were enqueued; withdrawn', {
        count: jobs.length,
      });
      throw new ApiError(409, ERRORS.noDevice);
    }
    return after;
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
   * After a failed transaction whose outcome is unknown: if it was applied (`applied()`), its
   * messages are withdrawn (`enqueue_failed`); retried for about a minute, since Redis may be what
   * failed.
   */
  private withdrawLater(jobs: SendJobData[], applied: () => Promise<boolean>, attempt: number): void {
    const delay = WITHDRAW_RETRY_MS[attempt];
    if (delay === undefined) {
      this.deps.logger.error('could not check a failed enqueue', { count: jobs.length });
      return;
    }
    setTimeout(() => {
      applied()
        .then((yes) => (yes ? this.withdraw(jobs, FAILURE_REASONS.enqueueFailed) : undefined))
        .catch((err: unknown) => {
          this.deps.logger.warn('retrying the check of a failed enqueue', {
            attempt,
            err: serializeError(err),
          });
          this.withdrawLater(jobs, applied, attempt + 1);
        });
    }, delay).unref();
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close().catch(() => undefined)));
    this.queues.clear();
  }
}
