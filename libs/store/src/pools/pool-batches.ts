import type { RedisClient } from '@mgw/common';
import {
  MESSAGE_STATUSES,
  keys,
  type BatchCounts,
  type BatchRecord,
  type PoolBatchRecord,
} from '@mgw/contracts';
import { BatchStore } from '../batches/batch-store.js';

/** A pooled batch as accepted: which device got which of its messages, and its recipients' devices. */
export interface PoolBatchShares {
  createdAt: Date;
  sendAt?: number;
  /** deviceId -> the ids of the messages it holds. */
  shares: Map<string, string[]>;
  /** recipient -> the device that sends to it (the pool's stickiness). */
  sticky: Map<string, string>;
}

const CURSOR = /^(\d{1,16})_([A-Za-z0-9-]{1,128})$/;

/**
 * A batch sent through a pool (`keys.poolBatch`, in the pool's slot): one batch id over several
 * devices. Each device holds its part as an ordinary batch under the same id (`keys.batch`, counted
 * by its own scripts), so the whole batch's counts are the sum of its parts; the pool's record
 * keeps which devices hold a part, which messages each still may give up (`keys.poolShare`), the
 * batch's pause or cancel (applied to every part, and to a part a move creates later), and where
 * each message is now (`keys.poolOwners`). Kept as long as message records.
 */
export class PoolBatchStore {
  private readonly batches: BatchStore;

  constructor(
    private readonly redis: RedisClient,
    private readonly retentionSeconds: number,
  ) {
    this.batches = new BatchStore(redis, retentionSeconds);
  }

  /** Records a pooled batch once its parts are accepted. */
  async record(poolId: string, batchId: string, batch: PoolBatchShares): Promise<void> {
    const ttl = this.retentionSeconds;
    const m = this.redis.multi();
    const key = keys.poolBatch(poolId, batchId);
    const total = [...batch.shares.values()].reduce((n, ids) => n + ids.length, 0);
    m.hset(key, {
      createdAt: batch.createdAt.toISOString(),
      total: String(total),
      devices: JSON.stringify([...batch.shares.keys()]),
      ...(batch.sendAt !== undefined ? { sendAt: new Date(batch.sendAt).toISOString() } : {}),
    });
    m.expire(key, ttl);
    const owners: Record<string, string> = {};
    for (const [deviceId, ids] of batch.shares) {
      if (ids.length === 0) continue;
      const share = keys.poolShare(poolId, batchId, deviceId);
      for (let i = 0; i < ids.length; i += 1000) m.sadd(share, ...ids.slice(i, i + 1000));
      m.expire(share, ttl);
      for (const id of ids) owners[id] = deviceId;
    }
    this.stageOwners(m, poolId, owners);
    if (batch.sticky.size > 0) {
      m.hset(keys.poolSticky(poolId), Object.fromEntries(batch.sticky));
      m.expire(keys.poolSticky(poolId), ttl);
    }
    const now = batch.createdAt.getTime();
    m.zadd(keys.poolBatchIndex(poolId), now, batchId);
    m.zremrangebyscore(keys.poolBatchIndex(poolId), '-inf', `(${now - ttl * 1000}`);
    m.expire(keys.poolBatchIndex(poolId), ttl);
    m.sadd(keys.poolOpenBatches(poolId), batchId);
    await m.exec();
  }

  private stageOwners(
    m: ReturnType<RedisClient['multi']>,
    poolId: string,
    owners: Record<string, string>,
  ): void {
    if (Object.keys(owners).length === 0) return;
    m.hset(keys.poolOwners(poolId), owners);
    m.expire(keys.poolOwners(poolId), this.retentionSeconds);
  }

  /** The devices that hold a part of the batch, and its control fields; undefined when unknown. */
  async meta(
    poolId: string,
    batchId: string,
  ): Promise<{ devices: string[]; pausedAt?: string; cancelledAt?: string; sendAt?: string } | undefined> {
    const h = await this.redis.hgetall(keys.poolBatch(poolId, batchId));
    if (!h.createdAt) return undefined;
    return {
      devices: JSON.parse(h.devices ?? '[]') as string[],
      ...(h.pausedAt ? { pausedAt: h.pausedAt } : {}),
      ...(h.cancelledAt ? { cancelledAt: h.cancelledAt } : {}),
      ...(h.sendAt ? { sendAt: h.sendAt } : {}),
    };
  }

  /** The whole batch: the sum of its parts, each part's counts beside it. */
  async get(poolId: string, batchId: string, now = Date.now()): Promise<PoolBatchRecord | undefined> {
    const h = await this.redis.hgetall(keys.poolBatch(poolId, batchId));
    if (!h.createdAt) return undefined;
    const devices = JSON.parse(h.devices ?? '[]') as string[];
    const parts = await Promise.all(devices.map((d) => this.batches.get(d, batchId, now)));
    const counts = Object.fromEntries(
      [...MESSAGE_STATUSES, 'held'].map((s) => [s, 0]),
    ) as unknown as BatchCounts & {
      held: number;
    };
    let total = 0;
    let completedAt: string | undefined;
    const shown: PoolBatchRecord['devices'] = [];
    parts.forEach((part, i) => {
      if (!part) return;
      total += part.total;
      for (const s of Object.keys(counts) as (keyof typeof counts)[]) counts[s] += part.counts[s];
      if (part.completedAt && (!completedAt || part.completedAt > completedAt))
        completedAt = part.completedAt;
      shown.push({ deviceId: devices[i]!, total: part.total, counts: part.counts });
    });
    const waiting = counts.queued + counts.scheduled;
    const done = total > 0 && waiting === 0;
    const state: BatchRecord['state'] = h.cancelledAt
      ? 'cancelled'
      : done
        ? 'completed'
        : h.pausedAt
          ? 'paused'
          : 'active';
    return {
      batchId,
      total,
      state,
      counts,
      createdAt: h.createdAt,
      ...(h.sendAt ? { sendAt: h.sendAt } : {}),
      ...(done && completedAt ? { completedAt } : {}),
      ...(h.pausedAt && !h.cancelledAt && !done ? { pausedAt: h.pausedAt } : {}),
      ...(h.cancelledAt ? { cancelledAt: h.cancelledAt } : {}),
      poolId,
      devices: shown,
      moved: Number(h.moved ?? 0),
    };
  }

  /** The pool's batches, newest first (`limit` after `cursor`, as BatchStore.list pages). */
  async list(
    poolId: string,
    limit: number,
    cursor?: string,
  ): Promise<{ batches: PoolBatchRecord[]; nextCursor?: string }> {
    const m = cursor === undefined ? undefined : CURSOR.exec(cursor);
    // From the cursor's millisecond on (ties in it are told apart by id below; a page reads at
    // most 1000 of them, more than one millisecond ever holds).
    const flat = await this.redis.zrevrangebyscore(
      keys.poolBatchIndex(poolId),
      m ? m[1]! : '+inf',
      '-inf',
      'WITHSCORES',
      'LIMIT',
      0,
      limit + 1 + (m ? 1000 : 0),
    );
    const entries: { batchId: string; at: number }[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const e = { batchId: flat[i]!, at: Number(flat[i + 1]) };
      if (m && e.at === Number(m[1]) && e.batchId >= m[2]!) continue;
      entries.push(e);
    }
    const page = entries.slice(0, limit);
    const records = await Promise.all(page.map((e) => this.get(poolId, e.batchId)));
    const last = page[page.length - 1];
    return {
      batches: records.filter((r): r is PoolBatchRecord => r !== undefined),
      ...(entries.length > limit && last ? { nextCursor: `${last.at}_${last.batchId}` } : {}),
    };
  }

  /** Pause, resume or cancel of the whole batch, on the pool's record (each part is controlled too). */
  async control(
    poolId: string,
    batchId: string,
    action: 'pause' | 'resume' | 'cancel',
    now = new Date(),
  ): Promise<void> {
    const key = keys.poolBatch(poolId, batchId);
    if (action === 'pause') await this.redis.hsetnx(key, 'pausedAt', now.toISOString());
    else if (action === 'resume') await this.redis.hdel(key, 'pausedAt');
    else {
      await this.redis
        .multi()
        .hsetnx(key, 'cancelledAt', now.toISOString())
        .srem(keys.poolOpenBatches(poolId), batchId)
        .exec();
    }
  }

  /** The batches of the pool whose messages may still move. */
  openBatches(poolId: string): Promise<string[]> {
    return this.redis.smembers(keys.poolOpenBatches(poolId));
  }

  /** A batch none of whose messages can move any more (every part done, or cancelled). */
  async close(poolId: string, batchId: string): Promise<void> {
    await this.redis.srem(keys.poolOpenBatches(poolId), batchId);
  }

  /** Up to `count` ids of the messages `deviceId` holds of the batch and may still give up. */
  share(poolId: string, batchId: string, deviceId: string, count: number): Promise<string[]> {
    return this.redis.srandmember(keys.poolShare(poolId, batchId, deviceId), count);
  }

  /** Whether the device still holds messages of the batch it may give up. */
  async shareSize(poolId: string, batchId: string, deviceId: string): Promise<number> {
    return this.redis.scard(keys.poolShare(poolId, batchId, deviceId));
  }

  /** Messages the device keeps for good (it took them, or they ended): no longer movable. */
  async forget(poolId: string, batchId: string, deviceId: string, ids: string[]): Promise<void> {
    if (ids.length) await this.redis.srem(keys.poolShare(poolId, batchId, deviceId), ...ids);
  }

  /**
   * A move done: the message belongs to `to` now (its share, the batch's devices, the recipient's
   * device, the owners map) and has left `from`'s share; the batch counts one more move.
   */
  async moved(
    poolId: string,
    batchId: string,
    from: string,
    to: string,
    moves: { messageId: string; recipient: string }[],
  ): Promise<void> {
    if (moves.length === 0) return;
    const ttl = this.retentionSeconds;
    const key = keys.poolBatch(poolId, batchId);
    const devices = JSON.parse((await this.redis.hget(key, 'devices')) ?? '[]') as string[];
    const ids = moves.map((x) => x.messageId);
    const m = this.redis.multi();
    if (!devices.includes(to)) m.hset(key, 'devices', JSON.stringify([...devices, to]));
    m.hincrby(key, 'moved', moves.length);
    m.srem(keys.poolShare(poolId, batchId, from), ...ids);
    m.sadd(keys.poolShare(poolId, batchId, to), ...ids);
    m.expire(keys.poolShare(poolId, batchId, to), ttl);
    this.stageOwners(m, poolId, Object.fromEntries(ids.map((id) => [id, to])));
    m.hset(keys.poolSticky(poolId), Object.fromEntries(moves.map((x) => [x.recipient, to])));
    await m.exec();
  }

  /** A single message through the pool: where it is (GET /messages/:id) and its recipient's device. */
  async remember(poolId: string, deviceId: string, messageId: string, recipient: string): Promise<void> {
    const m = this.redis.multi();
    this.stageOwners(m, poolId, { [messageId]: deviceId });
    m.hset(keys.poolSticky(poolId), recipient, deviceId);
    m.expire(keys.poolSticky(poolId), this.retentionSeconds);
    await m.exec();
  }

  /** The device each recipient got its pooled messages from (undefined: none yet). */
  async stickyDevices(poolId: string, recipients: string[]): Promise<(string | undefined)[]> {
    if (recipients.length === 0) return [];
    const out: (string | undefined)[] = [];
    for (let i = 0; i < recipients.length; i += 1000) {
      const got = await this.redis.hmget(keys.poolSticky(poolId), ...recipients.slice(i, i + 1000));
      out.push(...got.map((v) => v ?? undefined));
    }
    return out;
  }

  /** The device that holds the pooled message now. */
  async owner(poolId: string, messageId: string): Promise<string | undefined> {
    return (await this.redis.hget(keys.poolOwners(poolId), messageId)) ?? undefined;
  }
}
