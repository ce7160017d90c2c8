import { serializeError } from '@mgw/common';
import { ERRORS, newMessageId, type SendJobData } from '@mgw/contracts';
import { ContentStore, getDeviceState, stageQueued } from '@mgw/store';
import { ApiError } from '../http/api-error.js';
import { requestSize, type AcceptDeps, type JobWriter, type SendRequest } from './job-writer.js';

/**
 * A list accepted in pieces is held (its messages wait, unsent) until its last piece commits.
 * Should the API die in between, the sender fails the held messages `enqueue_failed` after this.
 */
const LIST_HOLD_MS = 60_000;
/** Past this, a list still being accepted is given up (withdrawn, 503) well before its hold ends. */
const LIST_GIVE_UP_MS = LIST_HOLD_MS / 2;

/**
 * A list longer than `listChunk`, one transaction per `listChunk` recipients, yielding to the event
 * loop between them. Its content is held (`heldUntil`) until the last piece commits, so no message
 * of it is sent before the whole list is accepted, and a piece that fails takes back the pieces
 * before it (the request gets the error, nothing is sent).
 */
export class ListInPieces {
  constructor(
    private readonly deps: AcceptDeps,
    private readonly writer: JobWriter,
    private readonly listChunk: number,
  ) {}

  /**
   * The first piece stores the content marked `pending` (the sender holds its messages); each
   * later one adds its messages to the content's count; the last clears `pending`. The next piece
   * is built while the previous one runs.
   */
  async accept(req: SendRequest): Promise<SendJobData[]> {
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
    if (refusal) throw refusal;

    const contentId = newMessageId();
    const queue = this.writer.queue(deviceId);
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
        const jobs = this.writer.jobsOf(
          req,
          req.recipients.slice(from, from + this.listChunk),
          contentId,
          state,
        );
        // The first piece counts the request's rate-limit hit (over the limit, it is discarded).
        const hits = from === 0 && req.hit && !req.hit.counted ? [req.hit] : [];
        const at = await this.writer.begin(deviceId, hits);
        const { tx } = at;
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
          stageQueued(tx, deviceId, jobs.length, size + varsSize(from, from + jobs.length));
        } else {
          this.deps.contents.stageMore(tx, deviceId, contentId, jobs.length);
          stageQueued(tx, deviceId, jobs.length, varsSize(from, from + jobs.length));
        }
        this.writer.stagePerMessage(tx, req, from, jobs);
        this.deps.index.stage(
          tx,
          deviceId,
          jobs.map((j) => j.messageId),
        );
        if (from + this.listChunk >= req.recipients.length)
          this.deps.contents.stageReady(tx, deviceId, contentId);
        await this.writer.addJobs(at, jobs, req.priority);
        // One piece at a time in Redis: a piece that fails stops the list before the next is sent.
        await settleRunning();
        if (Date.now() - started > LIST_GIVE_UP_MS) throw new ApiError(503, ERRORS.serviceUnavailable);
        const probe = jobs[0]!.messageId;
        const applied = async () =>
          from === 0
            ? this.deps.contents.exists(deviceId, contentId)
            : (await queue.getJobState(probe)) !== 'unknown';
        const done = this.writer.commit(at, jobs, state, applied).then(() => undefined);
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
    const queue = this.writer.queue(deviceId);
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
}
