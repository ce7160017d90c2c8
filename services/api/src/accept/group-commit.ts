import { newMessageId, type SendJobData } from '@mgw/contracts';
import { getDeviceState, stageQueued, type DeviceState } from '@mgw/store';
import { rateLimited } from '../http/send-rate-limit.js';
import { requestSize, type AcceptDeps, type JobWriter, type SendRequest } from './job-writer.js';

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
 * Requests of at most `listChunk` recipients. Those for one device that arrive while its previous
 * transaction is in flight share the next one: one state read and one transaction for all of
 * them, each still admitted or refused (409, 429) on its own.
 */
export class GroupCommit {
  /** Per device: requests waiting for the next transaction. */
  private readonly waiting = new Map<string, Waiting[]>();
  /** Devices with a transaction in flight. */
  private readonly committing = new Set<string>();

  constructor(
    private readonly deps: AcceptDeps,
    private readonly writer: JobWriter,
    /** Recipients per transaction (the first request always goes, whatever its size). */
    private readonly listChunk: number,
  ) {}

  accept(req: SendRequest): Promise<SendJobData[]> {
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
      bytes += requestSize(req);
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
      const size = requestSize(req);
      const refusal = this.writer.refusal(state, messages, bytes, req.recipients.length, size);
      if (refusal) {
        waiting.reject(refusal);
        continue;
      }
      messages += req.recipients.length;
      bytes += size;
      admitted.push({
        waiting,
        jobs: this.writer.jobsOf(req, req.recipients, newMessageId(), state),
        bytes: size,
      });
    }
    if (admitted.length === 0) return known;

    // The requests' rate-limit hits are counted by this transaction, ahead of its MULTI.
    const hits = admitted.flatMap((a) => {
      const { hit } = a.waiting.req;
      return hit && !hit.counted ? [hit] : [];
    });
    const at = await this.writer.begin(deviceId, hits);
    const { tx } = at;
    for (const { waiting, jobs } of admitted) {
      const { req } = waiting;
      this.deps.contents.stage(tx, deviceId, jobs[0]!.contentId, req.content, jobs.length, req.media);
      this.writer.stagePerMessage(tx, req, 0, jobs);
      await this.writer.addJobs(at, jobs, req.priority);
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
      after = await this.writer.commit(at, all, state, () =>
        this.deps.contents.exists(deviceId, first.contentId),
      );
    } catch (err) {
      if (hits.some((h) => h.over)) {
        // Redis discarded the transaction (nothing was written): the requests over their limit
        // are refused on its count; the others, their hits counted, go with the next one.
        const again: Waiting[] = [];
        for (const { waiting } of admitted) {
          const { hit } = waiting.req;
          if (hit?.over) waiting.reject(rateLimited(hit));
          else again.push(waiting);
        }
        if (again.length > 0) this.waiting.set(deviceId, [...again, ...(this.waiting.get(deviceId) ?? [])]);
        return undefined;
      }
      for (const a of admitted) a.waiting.reject(err);
      return undefined;
    }
    for (const a of admitted) a.waiting.resolve(a.jobs);
    return after;
  }
}
