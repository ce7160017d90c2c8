import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from '@mgw/common';
import { keys, type BatchCounts, type BatchRecord } from '@mgw/contracts';

const STATUSES = ['queued', 'sent', 'delivered', 'read', 'failed'] as const;

/**
 * Lists (`keys.batch`): a hash of counts per status written when the list is accepted (all
 * `queued`) and moved by the message transition script (message-scripts.ts) as each message
 * changes status, so the counts always sum to `total` and GET /batches reads one hash.
 */
export class BatchStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly retentionSeconds: number,
  ) {}

  /** Adds `messages` queued messages of the list to the transaction that accepts them. */
  stage(
    multi: ChainableCommander,
    deviceId: string,
    batchId: string,
    messages: number,
    now = new Date(),
  ): void {
    const key = keys.batch(deviceId, batchId);
    multi.hincrby(key, 'total', messages);
    multi.hincrby(key, 'queued', messages);
    multi.hsetnx(key, 'createdAt', now.toISOString());
    multi.expire(key, this.retentionSeconds);
  }

  async get(deviceId: string, batchId: string): Promise<BatchRecord | undefined> {
    const h = await this.redis.hgetall(keys.batch(deviceId, batchId));
    if (!h.total) return undefined;
    const counts = Object.fromEntries(
      STATUSES.map((s) => [s, Math.max(0, Number(h[s] ?? 0))]),
    ) as unknown as BatchCounts;
    return {
      batchId,
      total: Number(h.total),
      counts,
      createdAt: h.createdAt!,
      ...(h.completedAt ? { completedAt: h.completedAt } : {}),
    };
  }
}
