import { newMessageId } from '@mgw/contracts';
import { getDeviceState } from '@mgw/store';
import { RecordedWrites, VERDICT, type AcceptReply } from './accept-script.js';
import type { Refusal } from './refusal.js';
import {
  AcceptUnanswered,
  requestSize,
  type AcceptCallEntry,
  type Accepted,
  type AcceptDeps,
  type JobWriter,
  type SendRequest,
} from './job-writer.js';

/** Requests sharing a call carry at most this many bytes of content between them. */
const CALL_MAX_BYTES = 16 * 1024 * 1024;
/** Calls refused because the link generation changed under them before the requests are refused. */
const GENERATION_RETRIES = 2;

/** A request waiting for the next call of its device. */
interface Waiting {
  req: SendRequest;
  resolve(outcome: Accepted | Refusal): void;
  reject(err: unknown): void;
}

/** A request built for a call: its jobs and its recorded writes. */
interface Built extends AcceptCallEntry {
  waiting: Waiting;
}

/**
 * Requests of at most `chunkRecipients` recipients, accepted by the accept script (`accept-script.ts`):
 * one call per group, atomic, each request admitted or refused on its own by what Redis
 * holds when it runs, its rate-limit hit counted by the same call. Requests for one device that
 * arrive while its previous call is in flight share the next one.
 *
 * The jobs carry the device's link generation, known from the previous call (or read once); a call
 * that finds another one (a logout, a new link) writes nothing for those requests, which are built
 * again with the new one.
 */
export class GroupCommit {
  /** Per device: requests waiting for the next call. */
  private readonly waiting = new Map<string, Waiting[]>();
  /** Devices with a call in flight. */
  private readonly committing = new Set<string>();
  /** Per device: its link generation as the last call found it. */
  private readonly generations = new Map<string, number>();

  constructor(
    private readonly deps: AcceptDeps,
    private readonly writer: JobWriter,
    /** Recipients per call (the first request always goes, whatever its size). */
    private readonly chunkRecipients: number,
  ) {}

  accept(req: SendRequest): Promise<Accepted | Refusal> {
    return new Promise((resolve, reject) => {
      const waiting = this.waiting.get(req.deviceId);
      if (waiting) waiting.push({ req, resolve, reject });
      else {
        this.waiting.set(req.deviceId, [{ req, resolve, reject }]);
        // Requests whose handlers run in this same turn of the event loop join this call.
        if (!this.committing.has(req.deviceId)) setImmediate(() => void this.commitWaiting(req.deviceId));
      }
    });
  }

  /** Commits the device's waiting requests (as many as fit in one call), then the next ones. */
  private async commitWaiting(deviceId: string): Promise<void> {
    const waiting = this.waiting.get(deviceId);
    if (!waiting || this.committing.has(deviceId)) return;
    // At most a piece's worth of recipients and of bytes per call (the first always goes).
    let recipients = 0;
    let bytes = 0;
    let take = 0;
    for (const { req } of waiting) {
      recipients += req.recipients.length;
      bytes += requestSize(req);
      if (take > 0 && (recipients > this.chunkRecipients || bytes > CALL_MAX_BYTES)) break;
      take++;
    }
    const group = waiting.splice(0, take);
    if (waiting.length === 0) this.waiting.delete(deviceId);
    this.committing.add(deviceId);
    try {
      await this.commitGroup(deviceId, group);
    } catch (err) {
      for (const w of group) w.reject(err);
    } finally {
      this.committing.delete(deviceId);
      if (this.waiting.has(deviceId)) void this.commitWaiting(deviceId);
    }
  }

  /** One call for `group` (again for requests that met another link generation). */
  private async commitGroup(deviceId: string, group: Waiting[]): Promise<void> {
    let generation =
      this.generations.get(deviceId) ?? (await getDeviceState(this.deps.redis, deviceId)).linkGeneration;
    let pending = group;
    for (let attempt = 0; pending.length > 0; attempt++) {
      const { built, jobKeys } = await this.build(deviceId, pending, generation);
      let reply: AcceptReply;
      try {
        reply = await this.writer.run(deviceId, generation, built, jobKeys);
      } catch (err) {
        if (!(err instanceof AcceptUnanswered)) throw err;
        // Each request learns which of its messages may have landed.
        for (const { waiting, jobs } of built) waiting.reject(err.of(jobs.map((j) => j.messageId)));
        return;
      }
      this.generations.set(deviceId, reply.linkGeneration);
      generation = reply.linkGeneration;
      pending = [];
      built.forEach(({ waiting, jobs }, i) => {
        const verdict = reply.requests[i]!;
        if (verdict.verdict === VERDICT.admitted || verdict.verdict === VERDICT.acceptedBefore)
          waiting.resolve({ kind: 'accepted', jobs });
        else if (verdict.verdict === VERDICT.otherGeneration && attempt < GENERATION_RETRIES)
          pending.push(waiting);
        else waiting.resolve(this.writer.refusalOf(verdict, waiting.req));
      });
    }
  }

  /**
   * Each request's jobs and writes (its content, a batch's records, the jobs), and BullMQ's keys of
   * the job-adding scripts they use.
   */
  private async build(
    deviceId: string,
    group: Waiting[],
    linkGeneration: number,
  ): Promise<{ built: Built[]; jobKeys: Map<string, readonly string[]> }> {
    const bull = await this.writer.bull(deviceId);
    const jobKeys = new Map<string, readonly string[]>();
    const built = group.map((waiting): Built => {
      const { req } = waiting;
      const jobs = this.writer.jobsOf(req, req.recipients, newMessageId(), linkGeneration);
      const writes = new RecordedWrites();
      const { contentId } = jobs[0]!;
      this.deps.contents.stage(writes, deviceId, contentId, req.content, jobs.length, req.media);
      this.writer.stagePerMessage(writes, req, 0, jobs);
      this.writer.recordJobs(writes, bull, jobs, req, jobKeys);
      const { hit } = req;
      const size = requestSize(req);
      return {
        waiting,
        jobs,
        ...(hit ? { hit } : {}),
        call: {
          ...(hit && !hit.counted ? { counter: hit.key } : {}),
          messages: jobs.length,
          bytes: size,
          check: { messages: jobs.length, bytes: size },
          ...(req.blocklistCheck !== undefined ? { blocklistCheck: req.blocklistCheck } : {}),
          ...(req.idempotent ? { acceptedIf: jobs[0]!.messageId } : {}),
          writes,
        },
        applied: () => this.deps.contents.exists(deviceId, contentId),
        ...(req.idempotent ? { idempotent: true } : {}),
      };
    });
    return { built, jobKeys };
  }
}
