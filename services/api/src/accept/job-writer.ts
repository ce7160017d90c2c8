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
  adoptJobScripts,
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
import { rateLimited, readHits, stageHits, type SendHit, type StagedHits } from '../http/send-rate-limit.js';
import { BullJobs, type SendJobOptions } from './bull-job.js';

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
  /** The request's hit against its token's rate limit, counted by the transaction that writes it. */
  hit?: SendHit;
}

/** A transaction being built: its commands, and the rate-limit hits counted ahead of its MULTI. */
export interface AcceptTx {
  tx: JobTransaction;
  staged?: StagedHits;
  bull: BullJobs;
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
const JOBS_PER_SLICE = 500;

/**
 * What both ways of accepting share (one transaction for a group of requests, several for a long
 * list): the devices' send queues, the quota check, a request's jobs (jobId = messageId; a queued
 * message has no other record), and the transaction that adds them — with the device's state read
 * again at its end, so jobs that landed after a logout are withdrawn (records `failed` /
 * `logged_out`) and the request gets 409.
 */
export class JobWriter {
  private readonly queues = new Map<string, SendQueue>();
  private readonly bullJobs = new Map<string, BullJobs>();

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

  /**
   * Starts the transaction of a device's messages. The `hits` not yet counted are counted ahead of
   * its MULTI, in the same round trip (`stageHits`): one over its limit makes Redis discard it.
   */
  async begin(deviceId: string, hits: SendHit[] = []): Promise<AcceptTx> {
    let bull = this.bullJobs.get(deviceId);
    if (!bull) {
      const queue = this.queue(deviceId);
      bull = new BullJobs(queue, await adoptJobScripts(this.deps.redis, queue));
      this.bullJobs.set(deviceId, bull);
    }
    // A plain pipeline (not `multi()`): its replies hold those of the commands before MULTI.
    const tx = this.deps.redis.pipeline() as JobTransaction;
    const staged = hits.length > 0 ? stageHits(tx, deviceId, hits) : undefined;
    (tx as unknown as { multi(): unknown }).multi();
    return { tx, bull, ...(staged ? { staged } : {}) };
  }

  async addJobs(at: AcceptTx, jobs: SendJobData[], priority: number): Promise<void> {
    for (const [i, data] of jobs.entries()) {
      // Let other requests run every so often while a big piece is built.
      if (i > 0 && i % JOBS_PER_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
      at.bull.add(at.tx, data.kind, data, this.jobOptions(priority, data));
    }
  }

  /** A job's options, in the order `BullJobs` packs them. */
  private jobOptions(priority: number, data: SendJobData): SendJobOptions {
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
    at: AcceptTx,
    jobs: SendJobData[],
    state: DeviceState,
    applied: () => Promise<boolean>,
  ): Promise<DeviceState> {
    const { tx, staged } = at;
    readDeviceState(tx, jobs[0]!.deviceId);
    // `exec()` on a pipeline in MULTI queues the EXEC; the next one sends the pipeline.
    void tx.exec();
    let replies: [Error | null, unknown][];
    try {
      const all = (await tx.exec()) ?? [];
      if (staged) readHits(staged, all);
      const [err, result] = all[all.length - 1] ?? [new Error('missing reply')];
      if (err) {
        // As ioredis's own `multi().exec()` does: EXECABORT carries the errors that caused it.
        (err as Error & { previousErrors?: Error[] }).previousErrors = all
          .slice(0, -1)
          .flatMap(([e]) => (e ? [e] : []));
        throw err;
      }
      const over = staged?.hits.find((h) => h.over);
      // Discarded by Redis (the WATCH of the rate-limit check): nothing was written.
      if (result === null && over) throw rateLimited(over);
      if (!Array.isArray(result)) throw new Error('unexpected reply to EXEC');
      replies = result.map((v: unknown) => (v instanceof Error ? [v, null] : [null, v]));
      const failed = replies.find(([e]) => e)?.[0];
      if (failed) throw failed;
    } catch (err) {
      if (!(err instanceof ApiError) && !/EXECABORT/.test((err as Error).message))
        this.withdrawLater(jobs, applied, 0);
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
