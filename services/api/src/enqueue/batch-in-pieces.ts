import { serializeError } from '@mgw/common';
import { newMessageId, type SendJobData } from '@mgw/contracts';
import { ContentStore, getDeviceState } from '@mgw/store';
import { RecordedWrites, VERDICT } from './accept-script.js';
import { refused, type Refusal } from './refusal.js';
import {
  AcceptUnanswered,
  requestSize,
  type AcceptCallEntry,
  type Accepted,
  type AcceptDeps,
  type JobWriter,
  type SendRequest,
} from './job-writer.js';

/**
 * A batch accepted in pieces is held (its messages wait, unsent) until its last piece commits.
 * Should the API die in between, the sender fails the held messages `enqueue_failed` after this.
 */
const BATCH_HOLD_MS = 60_000;
/** Past this, a batch still being accepted is given up (taken back, refused) well before its hold ends. */
const BATCH_GIVE_UP_MS = BATCH_HOLD_MS / 2;

/**
 * A batch longer than `chunkRecipients`, one accept call per `chunkRecipients` recipients, yielding to the event
 * loop between them. Its content is held (`heldUntil`) until the last piece commits, so no message
 * of it is sent before the whole batch is accepted, and a piece that fails takes back the pieces
 * before it (the request is refused or fails whole, nothing is sent).
 */
export class BatchInPieces {
  constructor(
    private readonly deps: AcceptDeps,
    private readonly writer: JobWriter,
    private readonly chunkRecipients: number,
  ) {}

  /**
   * The first piece stores the content marked `pending` (the sender holds its messages) and is
   * checked against the device's quota for the whole batch; each later one adds its messages to the
   * content's count; the last clears `pending`. Each piece is one call of the accept script, which
   * refuses it if the device went away or its link changed meanwhile. The next piece is built
   * while the previous one runs.
   */
  async accept(req: SendRequest): Promise<Accepted | Refusal> {
    const { deviceId } = req;
    const started = Date.now();
    const state = await getDeviceState(this.deps.redis, deviceId);
    const size = ContentStore.sizeOf(req.content, req.media);
    const varsSize = (from: number, to: number) =>
      req.vars ? ContentStore.varsSize(req.vars.slice(from, to)) : 0;
    const refusal = this.writer.refusal(
      state,
      state.queuedMessages,
      state.queuedBytes,
      req.recipients.length,
      requestSize(req),
    );
    if (refusal) return refusal;

    const contentId = req.contentId ?? newMessageId();
    const queue = this.writer.queue(deviceId);
    const bull = await this.writer.bull(deviceId);
    /** Pieces known to be in Redis. */
    const committed: SendJobData[] = [];
    /** The piece Redis is running now (the next one is built meanwhile); its refusal, if refused. */
    let running: { done: Promise<Refusal | undefined>; jobs: SendJobData[] } | undefined;
    const settleRunning = async (): Promise<Refusal | undefined> => {
      if (!running) return undefined;
      const { done, jobs } = running;
      running = undefined;
      const refusal = await done;
      if (!refusal) committed.push(...jobs);
      return refusal;
    };
    let refusedBy: Refusal | undefined;
    try {
      for (let from = 0; from < req.recipients.length; from += this.chunkRecipients) {
        const first = from === 0;
        const jobs = this.writer.jobsOf(
          req,
          req.recipients.slice(from, from + this.chunkRecipients),
          contentId,
          state.linkGeneration,
          from,
        );
        const writes = new RecordedWrites();
        if (first)
          this.deps.contents.stage(
            writes,
            deviceId,
            contentId,
            req.content,
            jobs.length,
            req.media,
            started + BATCH_HOLD_MS,
          );
        else this.deps.contents.stageMore(writes, deviceId, contentId, jobs.length);
        this.writer.stagePerMessage(writes, req, from, jobs);
        if (from + this.chunkRecipients >= req.recipients.length)
          this.deps.contents.stageReady(writes, deviceId, contentId);
        const jobKeys = new Map<string, readonly string[]>();
        this.writer.recordJobs(writes, bull, jobs, req, jobKeys);
        // The first piece counts the request's rate-limit hit and is checked for the whole batch.
        const hit = first && req.hit && !req.hit.counted ? req.hit : undefined;
        const probe = jobs[0]!.messageId;
        const entry: AcceptCallEntry = {
          call: {
            ...(hit ? { counter: hit.key } : {}),
            messages: jobs.length,
            bytes: (first ? size : 0) + varsSize(from, from + jobs.length),
            ...(first ? { check: { messages: req.recipients.length, bytes: requestSize(req) } } : {}),
            ...(req.idempotent ? { acceptedIf: probe } : {}),
            writes,
          },
          jobs,
          ...(hit ? { hit } : {}),
          ...(req.idempotent ? { idempotent: true } : {}),
          applied: async () =>
            first
              ? this.deps.contents.exists(deviceId, contentId)
              : (await queue.getJobState(probe)) !== 'unknown',
        };
        // One piece at a time in Redis: a piece that fails stops the batch before the next is sent.
        refusedBy = await settleRunning();
        if (!refusedBy && Date.now() - started > BATCH_GIVE_UP_MS) refusedBy = refused('gave_up');
        if (refusedBy) break;
        const done = this.writer.run(deviceId, state.linkGeneration, [entry], jobKeys).then((reply) => {
          const { verdict } = reply.requests[0]!;
          // Accepted before: a retry of an idempotent batch finds the pieces its first run wrote.
          if (verdict === VERDICT.admitted || verdict === VERDICT.acceptedBefore) return undefined;
          return this.writer.refusalOf(reply.requests[0]!, req);
        });
        // Awaited only when the next piece is built: observed now too, since a rejection no one
        // is waiting for yet would stop the process (Node's default for unhandled rejections).
        done.catch(() => undefined);
        running = { done, jobs };
        // The piece is on its way; let other requests run before the next one is built.
        await new Promise((resolve) => setImmediate(resolve));
      }
      refusedBy ??= await settleRunning();
    } catch (err) {
      // A piece still running is waited for: if it lands, it is taken back with the others.
      await settleRunning().catch(() => undefined);
      if (err instanceof AcceptUnanswered) {
        const ids = req.recipients.map((_, i) => req.messageIds?.[i]).filter((id) => id !== undefined);
        // An idempotent batch stays as far as it got: its retry (same ids) finds those pieces and
        // writes the rest; its hold fails it `enqueue_failed` should no retry come.
        if (req.idempotent) throw err.of(ids);
        if (committed.length > 0) await this.takeBack(committed, contentId);
        throw err.of(ids);
      }
      // The pieces in Redis are taken back: the request fails whole (the failed piece was never
      // applied, or `run` withdraws it once its outcome is known).
      if (committed.length > 0) await this.takeBack(committed, contentId);
      throw err;
    }
    if (!refusedBy) return { kind: 'accepted', jobs: committed };
    // Refused (the piece refused wrote nothing): the pieces in Redis are taken back.
    if (committed.length > 0) await this.takeBack(committed, contentId);
    return refusedBy;
  }

  /**
   * Removes the jobs of a refused batch's committed pieces and un-counts them. Their ids were never
   * given to the client, so they leave no record. A job a worker holds right now (waiting for the
   * batch) cannot be removed: it stays held and fails `enqueue_failed` when the hold ends.
   */
  private async takeBack(jobs: SendJobData[], contentId: string): Promise<void> {
    const { deviceId } = jobs[0]!;
    const queue = this.writer.queue(deviceId);
    try {
      const removed = await Promise.all(jobs.map((j) => queue.remove(j.messageId).catch(() => 0)));
      const count = removed.filter((r) => r === 1).length;
      await this.deps.contents.unstage(deviceId, contentId, count, count === jobs.length);
      if (count < jobs.length)
        this.deps.logger.warn(
          'part of a refused batch could not be taken back; it is held until its hold ends',
          {
            count: jobs.length - count,
          },
        );
    } catch (err) {
      this.deps.logger.error(
        'could not take back a refused batch; its messages stay held and fail when the hold ends',
        {
          count: jobs.length,
          err: serializeError(err),
        },
      );
    }
  }
}
