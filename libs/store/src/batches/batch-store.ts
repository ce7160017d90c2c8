import type { RedisClient } from '@mgw/common';
import { MESSAGE_STATUSES, keys, type BatchCounts, type BatchRecord, type BatchState } from '@mgw/contracts';
import type { StagedWrites } from '../messages/staged-writes.js';

/** One page of GET /batches: newest first, and the cursor of the next (older) page if any. */
export interface BatchPage {
  batches: BatchRecord[];
  nextCursor?: string;
}

/** A page cursor: the last batch's acceptance time (ms) and id (ties in one millisecond by id). */
const CURSOR = /^(\d{1,16})_([A-Za-z0-9-]{1,128})$/;

/**
 * Batches (`keys.batch`): a hash of counts per status written when the batch is accepted (all
 * `queued`, or all `scheduled` for a scheduled batch) and moved by the message transition script
 * (message-scripts.ts) as each message changes status, so the counts always sum to `total` and
 * GET /batches reads one hash. A scheduled batch's messages wait in `scheduled` (the script moves
 * them from there); once its `sendAt` has passed, those still waiting are read as `queued`. Its
 * control fields (`pausedAt`, `cancelledAt`) are written by batch-control.ts; the ids of its
 * messages the sender holds right now are a set beside it (`keys.batchHeld`). The device's batches
 * are indexed by acceptance time (`keys.batchIndex`) for GET /batches.
 */
export class BatchStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly retentionSeconds: number,
  ) {}

  /** Adds `messages` messages of the batch to the writes that accept them. */
  stage(
    multi: StagedWrites,
    deviceId: string,
    batchId: string,
    messages: number,
    now = new Date(),
    /** A scheduled batch: when it is due (epoch ms). */
    sendAt?: number,
  ): void {
    const key = keys.batch(deviceId, batchId);
    multi.hincrby(key, 'total', messages);
    multi.hincrby(key, sendAt === undefined ? 'queued' : 'scheduled', messages);
    multi.hsetnx(key, 'createdAt', now.toISOString());
    if (sendAt !== undefined) multi.hsetnx(key, 'sendAt', new Date(sendAt).toISOString());
    multi.expire(key, this.retentionSeconds);
    // The index keeps what the hashes keep: batches older than the retention leave it here.
    const index = keys.batchIndex(deviceId);
    multi.zadd(index, 'NX', now.getTime(), batchId);
    multi.zremrangebyscore(index, '-inf', `(${now.getTime() - this.retentionSeconds * 1000}`);
    multi.expire(index, this.retentionSeconds);
  }

  async get(deviceId: string, batchId: string, now = Date.now()): Promise<BatchRecord | undefined> {
    const [[, h], [, held]] = (await this.redis
      .multi()
      .hgetall(keys.batch(deviceId, batchId))
      .scard(keys.batchHeld(deviceId, batchId))
      .exec()) as [[null, Record<string, string>], [null, number]];
    return h.total ? toRecord(batchId, h, held, now) : undefined;
  }

  /**
   * The device's batches, newest first: `limit` of them after `cursor` (the `nextCursor` of the
   * page before). Batches whose hash expired are skipped and dropped from the index.
   */
  async list(deviceId: string, limit: number, cursor?: string): Promise<BatchPage> {
    const index = keys.batchIndex(deviceId);
    const after = cursor === undefined ? undefined : parseCursor(cursor);
    const entries: { batchId: string; at: number }[] = [];
    // Ties in one millisecond come in descending id order: those up to the cursor's id were shown.
    for (let offset = 0; entries.length <= limit;) {
      const count = limit + 1 - entries.length;
      const flat = await this.redis.zrevrangebyscore(
        index,
        after ? after.at : '+inf',
        '-inf',
        'WITHSCORES',
        'LIMIT',
        offset,
        count,
      );
      offset += flat.length / 2;
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const e = { batchId: flat[i]!, at: Number(flat[i + 1]) };
        if (after && e.at === after.at && e.batchId >= after.batchId) continue;
        entries.push(e);
      }
      if (flat.length / 2 < count) break;
    }
    const page = entries.slice(0, limit);
    const records = await Promise.all(page.map((e) => this.get(deviceId, e.batchId)));
    const gone = page.filter((_, i) => !records[i]).map((e) => e.batchId);
    if (gone.length) await this.redis.zrem(index, ...gone);
    const last = page[page.length - 1];
    return {
      batches: records.filter((r): r is BatchRecord => r !== undefined),
      ...(entries.length > limit && last ? { nextCursor: `${last.at}_${last.batchId}` } : {}),
    };
  }
}

/** True when `cursor` has the shape of a `nextCursor` (checked by the route's schema too). */
export function isBatchCursor(cursor: string): boolean {
  return CURSOR.test(cursor);
}

function parseCursor(cursor: string): { at: number; batchId: string } {
  const m = CURSOR.exec(cursor);
  if (!m) throw new Error('not a batch cursor');
  return { at: Number(m[1]), batchId: m[2]! };
}

/** Precedence: a cancelled batch stays cancelled once its last message is final; then completed, paused. */
export function batchState(h: Record<string, string>): BatchState {
  if (h.cancelledAt) return 'cancelled';
  if (h.completedAt) return 'completed';
  if (h.pausedAt) return 'paused';
  return 'active';
}

function toRecord(batchId: string, h: Record<string, string>, held: number, now: number): BatchRecord {
  const counts = Object.fromEntries(
    MESSAGE_STATUSES.map((s) => [s, Math.max(0, Number(h[s] ?? 0))]),
  ) as unknown as BatchCounts;
  // Due: what still waits of a scheduled batch is queued now.
  if (!h.sendAt || Date.parse(h.sendAt) <= now) {
    counts.queued += counts.scheduled;
    counts.scheduled = 0;
  }
  return {
    batchId,
    total: Number(h.total),
    state: batchState(h),
    counts: { ...counts, held: Math.min(held, counts.queued) },
    createdAt: h.createdAt!,
    ...(h.sendAt ? { sendAt: h.sendAt } : {}),
    ...(h.completedAt ? { completedAt: h.completedAt } : {}),
    ...(h.pausedAt && !h.cancelledAt && !h.completedAt ? { pausedAt: h.pausedAt } : {}),
    ...(h.cancelledAt ? { cancelledAt: h.cancelledAt } : {}),
  };
}
