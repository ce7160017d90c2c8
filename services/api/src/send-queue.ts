import { Job, type JobsOptions } from 'bullmq';
import { serializeError, type Logger, type RedisClient } from '@mgw/common';
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
  jobTransaction,
  openSendQueue,
  parseDeviceState,
  readDeviceState,
  stageQueued,
  type DeviceState,
  type BatchStore,
  type JobTransaction,
  type MessageIndex,
  type MessageStore,
  type SendQueue,
  DEVICE_STATE_REPLIES,
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
  /** Recipients per transaction: larger lists are accepted in pieces of this size (default 500). */
  listChunk?: number;
  messages: MessageStore;
  /** A list's counts, written with its messages. */
  batches: BatchStore;
  /** The order GET /messages lists messages in, written with them. */
  index: MessageIndex;
  contents: ContentStore;
  events: QueueEventsPool;
  metrics: Metrics;
  logger: Logger;
}

const WITHDRAW_RETRY_MS = [0, 1000, 5000, 15_000, 60_000];
const DEFAULT_LIST_CHUNK = 500;
/**
 * A list accepted in pieces is held (its messages wait, unsent) until its last piece commits.
 * Should the API die in between, the sender fails the held messages `enqueue_failed` after this.
 */
const LIST_HOLD_MS = 60_000;
/** Past this, a list still being accepted is given up (withdrawn, 503) well before its hold ends. */
const LIST_GIVE_UP_MS = LIST_HOLD_MS / 2;

/** Jobs built between two yields to the event loop. */
const JOBS_PER_SLICE = 100;
/** Requests sharing a transaction carry at most this many bytes of content between them. */
const BATCH_MAX_BYTES = 16 * 1024 * 1024;

/** A request waiting for the next transaction of its device. */
interface Waiting {
  req: SendRequest;
  resolve(jobs: SendJobData[]): void;
  reject(err: unknown): void;
}

/** A request admitted into a transaction. */
interface Admitted {
  waiting: Waiting;
  jobs: SendJobData[];
  bytes: number;
}

/**
 * The producer side of the per-device send queues. A request is accepted in one transaction: its
 * content stored once, the device's queue quota counted, one job per recipient (jobId =
 * messageId; a queued message has no other record), and — at the same instant, inside the
 * transaction — the device's state read again. A logout that ran between the first check and
 * the transaction has already purged the queue and started a new link generation, so jobs that
 * landed after it are withdrawn (records `failed` / `logged_out`) and the request gets 409.
 *
 * Requests for one device that arrive while its previous transaction is in flight share the next
 * one (group commit): one state read and one transaction for all of them, each still admitted or
 * refused (409, 429) on its own. A list longer than `listChunk` is accepted in pieces, one
 * transaction each, yielding to the event loop between them; its content is held (`heldUntil`)
 * until the last piece commits, so no message of it is sent before the whole list is accepted,
 * and a piece that fails takes back the pieces before it (the request gets the error, nothing sent).
 */
export class SendQueues {
  private readonly queues = new Map<string, SendQueue>();
  /** Per device: requests waiting for the next transaction. */
  private readonly waiting = new Map<string, Waiting[]>();
  /** Devices with a transaction in flight. */
  private readonly committing = new Set<string>();
  private readonly listChunk: number;

  constructor(private readonly deps: SendQueuesOptions) {
    this.listChunk = deps.listChunk ?? DEFAULT_LIST_CHUNK;
  }

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
  accept(req: SendRequest): Promise<SendJobData[]> {
    if (req.recipients.length > this.listChunk) return this.acceptInPieces(req);
    return new Promise((resolve, reject) => {
      const waiting = this.waiting.get(req.deviceId);
      if (waiting) waiting.push({ req, resolve, reject });
      else {
        this.waiting.set(req.deviceId, [{ req, resolve, reject }]);
        // Requests whose handlers run in this same turn of the event loop join this transaction.
        if (!this.committing.has(req.deviceId)) setImmediate(() => void this.commitWaiting(req.deviceId));
      }
    });
  }

  /** Commits the device's waiting requests (as many as fit in one transaction), then the next ones. */
  private async commitWaiting(deviceId: string, known?: DeviceState): Promise<void> {
    const waiting = this.waiting.get(deviceId);
    if (!waiting || this.committing.has(deviceId)) return;
    // At most a piece's worth of recipients and of bytes per transaction (the first always goes).
    let recipients = 0;
    let bytes = 0;
    let take = 0;
    for (const { req } of waiting) {
      recipients += req.recipients.length;
      bytes += ContentStore.sizeOf(req.content, req.media);
      if (take > 0 && (recipients > this.listChunk || bytes > BATCH_MAX_BYTES)) break;
      take++;
    }
    const batch = waiting.splice(0, take);
    if (waiting.length === 0) this.waiting.delete(deviceId);
    this.committing.add(deviceId);
    let after: DeviceState | undefined;
    try {
      after = await this.commitBatch(deviceId, batch, known);
    } catch (err) {
      for (const w of batch) w.reject(err);
    } finally {
      this.committing.delete(deviceId);
      // Requests that arrived while this transaction ran are admitted against the state it read
      // at its end (the same instant a new read would see, less a round trip).
      if (this.waiting.has(deviceId))
        void this.commitWaiting(deviceId, after?.acceptsMessages ? after : undefined);
    }
  }

  /**
   * One transaction for `batch`. `known` is the device's state as the previous transaction read
   * it at its end, when this batch was already waiting for it; otherwise the state is read first.
   * Returns the state this transaction read at its end, when the device still takes messages.
   */
  private async commitBatch(
    deviceId: string,
    batch: Waiting[],
    known?: DeviceState,
  ): Promise<DeviceState | undefined> {
    const state = known ?? (await getDeviceState(this.deps.redis, deviceId));
    const admitted: Admitted[] = [];
    let messages = state.queuedMessages;
    let bytes = state.queuedBytes;
    for (const waiting of batch) {
      const { req } = waiting;
      const size = ContentStore.sizeOf(req.content, req.media);
      const refusal = this.refusal(state, messages, bytes, req.recipients.length, size);
      if (refusal) {
        waiting.reject(refusal);
        continue;
      }
      messages += req.recipients.length;
      bytes += size;
      admitted.push({ waiting, jobs: this.jobsOf(req, req.recipients, newMessageId(), state), bytes: size });
    }
    if (admitted.length === 0) return known;

    const tx = await jobTransaction(this.deps.redis, this.queue(deviceId));
    for (const { waiting, jobs } of admitted) {
      const { req } = waiting;
      this.deps.contents.stage(tx, deviceId, jobs[0]!.contentId, req.content, jobs.length, req.media);
      if (req.batchId) this.deps.batches.stage(tx, deviceId, req.batchId, jobs.length);
      await this.addJobs(tx, jobs, req.priority);
    }
    const all = admitted.flatMap((a) => a.jobs);
    // The quota and the index once for the whole transaction (the index in request order).
    stageQueued(
      tx,
      deviceId,
      all.length,
      admitted.reduce((n, a) => n + a.bytes, 0),
    );
    this.deps.index.stage(
      tx,
      deviceId,
      all.map((j) => j.messageId),
    );
    const first = all[0]!;
    let after: DeviceState;
    try {
      after = await this.commit(tx, all, state, () => this.deps.contents.exists(deviceId, first.contentId));
    } catch (err) {
      for (const a of admitted) a.waiting.reject(err);
      return undefined;
    }
    for (const a of admitted) a.waiting.resolve(a.jobs);
    return after;
  }

  /**
   * A long list, one transaction per `listChunk` recipients. The first stores the content marked
   * `pending` (the sender holds its messages); each later one adds its messages to the content's
   * count; the last clears `pending`. The next piece is built while the previous one runs.
   */
  private async acceptInPieces(req: SendRequest): Promise<SendJobData[]> {
    const { deviceId } = req;
    const started = Date.now();
    const state = await getDeviceState(this.deps.redis, deviceId);
    const size = ContentStore.sizeOf(req.content, req.media);
    const refusal = this.refusal(state, state.queuedMessages, state.queuedBytes, req.recipients.length, size);
    if (refusal) throw refusal;

    const contentId = newMessageId();
    const queue = this.queue(deviceId);
    /** Pieces known to be in Redis. */
    const committed: SendJobData[] = [];
    /** The piece Redis is running now (the next one is built meanwhile). */
    let running: { done: Promise<void>; jobs: SendJobData[] } | undefined;
    const settleRunning = async () => {
      if (!running) return;
      const { done, jobs } = running;
      running = undefined;
      await done;
      committed.push(...jobs);
    };
    try {
      for (let from = 0; from < req.recipients.length; from += this.listChunk) {
        const jobs = this.jobsOf(req, req.recipients.slice(from, from + this.listChunk), contentId, state);
        const tx = await jobTransaction(this.deps.redis, queue);
        if (from === 0) {
          this.deps.contents.stage(
            tx,
            deviceId,
            contentId,
            req.content,
            jobs.length,
            req.media,
            started + LIST_HOLD_MS,
          );
          stageQueued(tx, deviceId, jobs.length, size);
        } else {
          this.deps.contents.stageMore(tx, deviceId, contentId, jobs.length);
          stageQueued(tx, deviceId, jobs.length, 0);
        }
        if (req.batchId) this.deps.batches.stage(tx, deviceId, req.batchId, jobs.length);
        this.deps.index.stage(
          tx,
          deviceId,
          jobs.map((j) => j.messageId),
        );
        if (from + this.listChunk >= req.recipients.length)
          this.deps.contents.stageReady(tx, deviceId, contentId);
        await this.addJobs(tx, jobs, req.priority);
        // One piece at a time in Redis: a piece that fails stops the list before the next is sent.
        await settleRunning();
        if (Date.now() - started > LIST_GIVE_UP_MS) throw new ApiError(503, ERRORS.serviceUnavailable);
        const probe = jobs[0]!.messageId;
        const applied = async () =>
          from === 0
            ? this.deps.contents.exists(deviceId, contentId)
            : (await queue.getJobState(probe)) !== 'unknown';
        const done = this.commit(tx, jobs, state, applied).then(() => undefined);
        // Awaited only when the next piece is built: observed now too, since a rejection no one
        // is waiting for yet would stop the process (Node's default for unhandled rejections).
        done.catch(() => undefined);
        running = { done, jobs };
        // The piece is on its way; let other requests run before the next one is built.
        await new Promise((resolve) => setImmediate(resolve));
      }
      await settleRunning();
      return committed;
    } catch (err) {
      // A piece still running is waited for: if it lands, it is withdrawn with the others.
      await settleRunning().catch(() => undefined);
      // The pieces in Redis are taken back: the request is refused whole (the failed piece was
      // never applied, or `commit` withdraws it once its outcome is known).
      if (committed.length > 0) await this.takeBack(committed, contentId);
      throw err;
    }
  }

  /**
   * Removes the jobs of a refused list's committed pieces and un-counts them. Their ids were never
   * given to the client, so they leave no record. A job a worker holds right now (waiting for the
   * list) cannot be removed: it stays held and fails `enqueue_failed` when the hold ends.
   */
  private async takeBack(jobs: SendJobData[], contentId: string): Promise<void> {
    const { deviceId } = jobs[0]!;
    const queue = this.queue(deviceId);
    try {
      const removed = await Promise.all(jobs.map((j) => queue.remove(j.messageId).catch(() => 0)));
      const count = removed.filter((r) => r === 1).length;
      await this.deps.contents.unstage(deviceId, contentId, count, count === jobs.length);
      if (count < jobs.length)
        this.deps.logger.warn(
          'part of a refused list could not be taken back; it is held until its hold ends',
          {
            count: jobs.length - count,
          },
        );
    } catch (err) {
      this.deps.logger.error(
        'could not take back a refused list; its messages stay held and fail when the hold ends',
        {
          count: jobs.length,
          err: serializeError(err),
        },
      );
    }
  }

  /** Why the device cannot take `messages` more messages of `bytes` now, if it cannot. */
  private refusal(
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

  private jobsOf(
    req: SendRequest,
    recipients: string[],
    contentId: string,
    state: DeviceState,
  ): SendJobData[] {
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
    }));
  }

  private async addJobs(tx: JobTransaction, jobs: SendJobData[], priority: number): Promise<void> {
    const queue = this.queue(jobs[0]!.deviceId);
    for (const [i, data] of jobs.entries()) {
      // ~40 µs a job: let other requests run every so often while a big piece is built.
      if (i > 0 && i % JOBS_PER_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
      await new Job(queue, data.kind, data, this.jobOptions(priority, data.messageId), data.messageId).addJob(
        tx as never,
      );
    }
  }

  /**
   * Runs a transaction that adds `jobs`, with the device's state read at its end. Refused as a
   * whole (EXECABORT: e.g. Redis out of memory) nothing was written; any other failure may be a
   * lost reply that hides an applied transaction, so `applied` is asked (retrying for about a
   * minute) and the jobs are withdrawn if it was. A device that went away meanwhile (logout: a new
   * link generation) gets its jobs withdrawn and the request 409.
   */
  private async commit(
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
