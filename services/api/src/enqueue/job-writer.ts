import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import {
  FAILURE_REASONS,
  keys,
  newMessageId,
  newPlatformMessageId,
  type MessageContent,
  type Metrics,
  type RecipientVars,
  type SendJobData,
} from '@mgw/contracts';
import {
  ContentStore,
  jobTraceOptions,
  openBullJobs,
  openSendQueue,
  type BullJobs,
  type BatchStore,
  type DeviceState,
  type MessageIndex,
  type MessageStore,
  type SendJobOptions,
  type SendQueue,
  type StagedWrites,
  USAGE_TTL_SECONDS,
} from '@mgw/store';
import {
  VERDICT,
  runAcceptScript,
  type AcceptCallRequest,
  type AcceptReply,
  type AcceptVerdict,
  type RecordedWrites,
} from './accept-script.js';
import type { Refusal } from './refusal.js';

/**
 * A request's hit against its token's rate limit (the route's `SendHit`, http/send-rate-limit.ts):
 * the accept call that writes the request counts it, and the count Redis gave is kept here.
 */
export interface RateLimitHit {
  /** The token's counter, in its device's slot. */
  readonly key: string;
  readonly limit: number;
  readonly windowMs: number;
  /** Redis's count of the hit, and when its window ends (epoch ms, by this clock). */
  counted?: { total: number; resetAt: number };
}

/** A request whose messages are written: one job per recipient, in `recipients` order. */
export interface Accepted {
  kind: 'accepted';
  jobs: SendJobData[];
}

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
  /** A personalised batch: each recipient's variables, in `recipients` order (only those the content uses). */
  vars?: RecipientVars[];
  /** A scheduled send: its jobs are delayed until this time (epoch ms). */
  sendAt?: number;
  /** The request's hit against its token's rate limit, counted by the accept call that writes it. */
  hit?: RateLimitHit;
  /**
   * A single recipient's address, refused (`recipient_blocked`) by the accept call that would
   * write it when the account's blocklist holds it: no round trip of its own before the call.
   */
  blocklistCheck?: string;
  /** A pooled batch's part: the pool (its jobs carry it; see libs/store/src/pools/). */
  poolId?: string;
  /**
   * The messages' ids, one per recipient: messages moving from another device of their pool keep
   * theirs; an idempotent request's are its key's (`seededMessageId`).
   */
  messageIds?: string[];
  /**
   * An idempotent request (`Idempotency-Key`; `messageIds` and `contentId` from its key's seed):
   * the accept finds it written before instead of writing it twice, and a call whose answer never
   * came is left in place for the retry to find, not withdrawn.
   */
  idempotent?: boolean;
  /** A long batch's content id (an idempotent request's, from its seed); unset: a new one. */
  contentId?: string;
  /** The accept span's W3C traceparent (tracing on): each job continues that trace. */
  traceparent?: string;
  /**
   * Messages moving from another device of their pool (pool-mover.ts): accepted once already, so
   * not counted in this device's usage again.
   */
  moved?: true;
}

/** One request (or one piece of a long batch) of an accept call. */
export interface AcceptCallEntry {
  call: AcceptCallRequest;
  jobs: SendJobData[];
  /** Its hit, counted by the call when `call.counter` is set. */
  hit?: RateLimitHit;
  /** Whether its writes are in Redis (asked when the call's outcome is unknown). */
  applied: () => Promise<boolean>;
  /** Left in place when the call's outcome is unknown (its retry finds it): `SendRequest.idempotent`. */
  idempotent?: boolean;
}

/**
 * An accept call sent to Redis whose answer never came (it timed out, or the connection went):
 * its writes may have landed. Carries the ids of the messages of the request it failed.
 */
export class AcceptUnanswered extends Error {
  override name = 'AcceptUnanswered';
  constructor(
    cause: unknown,
    readonly messageIds: string[] = [],
  ) {
    super(`the accept call got no answer: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }

  /** The same failure, for one request of the call. */
  of(messageIds: string[]): AcceptUnanswered {
    return new AcceptUnanswered(this.cause, messageIds);
  }
}

/**
 * A request whose accept went out and got no answer: it may have been accepted. The ids its
 * messages carry (a batch's id as `messageId`), so its caller can look or retry.
 */
export interface AcceptUnknown {
  kind: 'unknown';
  messageId?: string;
  messageIds?: string[];
}

/**
 * Runs an accept; one whose call got no answer (`AcceptUnanswered`) comes back as `AcceptUnknown`
 * with the ids its messages have (the request's own when it chose them, an idempotent one's).
 */
export async function acceptOrUnknown<T>(
  ids: { messageIds: string[] } | undefined,
  batchId: string | undefined,
  accept: () => Promise<T>,
): Promise<T | AcceptUnknown> {
  try {
    return await accept();
  } catch (err) {
    if (!(err instanceof AcceptUnanswered)) throw err;
    const messageIds = ids?.messageIds ?? err.messageIds;
    if (batchId !== undefined) return { kind: 'unknown', messageId: batchId, messageIds };
    return { kind: 'unknown', ...(messageIds[0] !== undefined ? { messageId: messageIds[0] } : {}) };
  }
}

/**
 * Whether a failed call may have run: it was sent and its answer did not come (timed out, or the
 * connection closed under it). A call refused before it was sent (no connection) did not.
 */
function mayHaveLanded(err: unknown): boolean {
  return /Command timed out|Connection is closed|max retries per request/.test((err as Error)?.message ?? '');
}

/** Bytes a request counts against the device's quota: its content, and a personalised batch's variables. */
export function requestSize(req: SendRequest): number {
  return ContentStore.sizeOf(req.content, req.media) + (req.vars ? ContentStore.varsSize(req.vars) : 0);
}

/** What accepting a request writes with, and to. */
export interface AcceptDeps {
  /** The API's own connection: device state reads and the accept script (`accept-script.ts`). */
  redis: RedisClient;
  /** BullMQ's connection (queues, job lookups and removals). */
  bullRedis: RedisClient;
  /** Attempts and first backoff of a job; failed jobs are kept as long as message records. */
  jobs: { attempts: number; backoffMs: number; failedRetentionSeconds: number };
  quota: { maxQueuedMessages: number; maxQueuedBytes: number };
  messages: MessageStore;
  /** A batch's counts, written with its messages. */
  batches: BatchStore;
  /** The order GET /messages lists messages in, written with them. */
  index: MessageIndex;
  contents: ContentStore;
  metrics: Metrics;
  logger: Logger;
}

const WITHDRAW_RETRY_MS = [0, 1000, 5000, 15_000, 60_000];

/**
 * What both ways of accepting share (one call for a group of requests, several for a long batch):
 * the devices' send queues, the quota check ahead of a long batch, a request's jobs (jobId =
 * messageId; a queued message has no other record), and the accept script's calls that write them.
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
  ): Refusal | undefined {
    if (!state.acceptsMessages) return { kind: 'refused', reason: 'no_device' };
    if (
      queued + messages > this.deps.quota.maxQueuedMessages ||
      queuedBytes + bytes > this.deps.quota.maxQueuedBytes
    )
      return this.queueFull({ messages: queued, bytes: queuedBytes });
    return undefined;
  }

  /** The refusal of a request the device's quota has no room for. */
  private queueFull(queued: { messages: number; bytes: number }): Refusal {
    const { quota } = this.deps;
    return {
      kind: 'refused',
      reason: 'queue_full',
      queued,
      limit: { messages: quota.maxQueuedMessages, bytes: quota.maxQueuedBytes },
    };
  }

  /**
   * The jobs of `recipients` of a request (`req.recipients`, or its piece starting at `from`),
   * carrying the device's link generation.
   */
  jobsOf(
    req: SendRequest,
    recipients: string[],
    contentId: string,
    linkGeneration: number,
    from = 0,
  ): SendJobData[] {
    const enqueuedAt = Date.now();
    return recipients.map((to, i) => ({
      kind: req.kind,
      messageId: req.messageIds?.[from + i] ?? newMessageId(),
      platformMessageId: newPlatformMessageId(),
      deviceId: req.deviceId,
      to,
      contentId,
      ...(req.batchId ? { batchId: req.batchId } : {}),
      linkGeneration,
      ...(req.expiresAt !== undefined ? { expiresAt: req.expiresAt } : {}),
      enqueuedAt,
      ...(req.sendAt !== undefined ? { sendAt: req.sendAt } : {}),
      ...(req.poolId ? { poolId: req.poolId } : {}),
    }));
  }

  /**
   * Adds what a request's jobs share to the writes that add them: the variables of the
   * recipients `jobs` stand for (those from `from` in `req.recipients`), and its batch's counts.
   */
  stagePerMessage(tx: StagedWrites, req: SendRequest, from: number, jobs: SendJobData[]): void {
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
    if (!req.moved) stageUsage(tx, req.deviceId, req.kind, jobs.length);
  }

  /** The device's job builder. */
  async bull(deviceId: string): Promise<BullJobs> {
    let bull = this.bullJobs.get(deviceId);
    if (!bull) {
      bull = await openBullJobs(this.queue(deviceId));
      this.bullJobs.set(deviceId, bull);
    }
    return bull;
  }

  /**
   * Records jobs for the accept script (see `accept-script.ts`): each job's BullMQ arguments, and
   * the queue's keys of the scripts they use, once, in `jobKeys`.
   */
  recordJobs(
    writes: RecordedWrites,
    bull: BullJobs,
    jobs: SendJobData[],
    req: Pick<SendRequest, 'priority' | 'traceparent'>,
    jobKeys: Map<string, readonly string[]>,
  ): void {
    for (const data of jobs) {
      const opts = this.jobOptions(req.priority, data, req.traceparent);
      const { plain, keyCount, args } = bull.command(data.kind, data, opts);
      if (!jobKeys.has(plain)) jobKeys.set(plain, args.slice(0, keyCount) as string[]);
      writes.job(plain, data.messageId, args.slice(keyCount));
    }
  }

  /** A job's options, in the order `BullJobs` packs them. */
  private jobOptions(priority: number, data: SendJobData, traceparent?: string): SendJobOptions {
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
      // The request's trace goes on with the job (tracing on only: docs/monitoring.md "Traces").
      ...jobTraceOptions(traceparent),
    };
  }

  /**
   * Runs the accept script for `entries` of one device, their jobs built for `linkGeneration`.
   * The call is atomic: refused whole (Redis out of memory) nothing was written; any other failure
   * may be a lost reply that hides an applied call, so each entry's `applied` is asked (retrying
   * for about a minute) and its jobs are withdrawn if it was. Records the hits the call counted.
   */
  async run(
    deviceId: string,
    linkGeneration: number,
    entries: AcceptCallEntry[],
    jobKeys: ReadonlyMap<string, readonly string[]>,
  ): Promise<AcceptReply> {
    const hit = entries.find((e) => e.hit)?.hit;
    let reply: AcceptReply;
    try {
      reply = await runAcceptScript(this.deps.redis, this.queue(deviceId), {
        deviceId,
        linkGeneration,
        quota: this.deps.quota,
        rateLimit: { limit: hit?.limit ?? 0, windowMs: hit?.windowMs ?? 0 },
        indexRetentionSeconds: this.deps.index.retentionSeconds,
        jobKeys,
        requests: entries.map((e) => e.call),
      });
    } catch (err) {
      // Refused whole (out of memory): nothing was written.
      if (/^OOM/.test((err as Error).message)) throw err;
      const unanswered = mayHaveLanded(err);
      // An idempotent request whose call may have landed stays for its retry to find; any other
      // is withdrawn if it landed.
      for (const { jobs, applied, idempotent } of entries)
        if (!(idempotent && unanswered)) this.withdrawLater(jobs, applied, 0);
      throw unanswered ? new AcceptUnanswered(err) : err;
    }
    const now = Date.now();
    entries.forEach(({ hit, jobs }, i) => {
      const verdict = reply.requests[i]!;
      if (hit && verdict.hit) hit.counted = { total: verdict.hit.total, resetAt: now + verdict.hit.ttlMs };
      if (verdict.verdict === VERDICT.admitted)
        this.deps.metrics.jobsEnqueued.inc({ queue_type: 'send', kind: jobs[0]!.kind }, jobs.length);
    });
    return reply;
  }

  /** Why the accept script did not admit a request (or a long batch). */
  refusalOf({ verdict, queued }: AcceptVerdict, req: Pick<SendRequest, 'hit' | 'blocklistCheck'>): Refusal {
    const { hit } = req;
    if (verdict === VERDICT.rateLimited && hit) {
      const retryAfterMs = hit.counted ? hit.counted.resetAt - Date.now() : hit.windowMs;
      return { kind: 'refused', reason: 'rate_limited', retryAfterMs };
    }
    if (verdict === VERDICT.recipientBlocked && req.blocklistCheck !== undefined)
      return { kind: 'refused', reason: 'recipient_blocked', recipient: req.blocklistCheck };
    if (verdict === VERDICT.quotaFull) return this.queueFull(queued);
    // The device takes no messages, or its link changed under the request.
    return { kind: 'refused', reason: 'no_device' };
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
   * After a failed call whose outcome is unknown: if it was applied (`applied()`), its
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

/**
 * Counts accepted messages in the device's usage of the day (usage.ts of @mgw/store): written by
 * the accept call with the messages, so an idempotent retry or a refused request counts nothing.
 */
function stageUsage(tx: StagedWrites, deviceId: string, kind: SendJobData['kind'], messages: number): void {
  const usage = keys.deviceDayUsage(deviceId, utcDayNow());
  tx.hincrby(usage, 'accepted', messages);
  if (kind === 'otp') tx.hincrby(usage, 'otp', messages);
  tx.expire(usage, USAGE_TTL_SECONDS);
}

/** The UTC day (`YYYY-MM-DD`) of now, worked out again only when a day has ended. */
let day = { name: '', ends: 0 };
function utcDayNow(now = Date.now()): string {
  if (now >= day.ends || now < day.ends - 86_400_000) {
    const start = now - (now % 86_400_000);
    day = { name: new Date(start).toISOString().slice(0, 10), ends: start + 86_400_000 };
  }
  return day.name;
}
