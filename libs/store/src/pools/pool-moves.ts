import type { RedisClient } from '@mgw/common';
import { keys, type SendJobData } from '@mgw/contracts';
import { storeScript } from '../lua.js';

/**
 * What taking a pooled message off its device came to (`lua/pool-release-4.lua`): `released`,
 * `taken` (its device sends it or it ended: for good), `busy` (an attempt is under way there: ask
 * again at the next round).
 */
export type ReleaseOutcome = 'released' | 'taken' | 'busy';

const RELEASE = storeScript<ReleaseOutcome>('pool-release-4');
const CONTENT_RELEASE = storeScript<number>('pool-content-release-3');
const RETARGET = storeScript<number>('pool-move-retarget-1');

/** One move of a pooled message, as its journal keeps it until it is done. */
export interface PoolMove {
  messageId: string;
  from: string;
  to: string;
  batchId: string;
  /** Why `from` dropped out of the pool's spread (the metric's and the event's `reason`). */
  reason: string;
}

/**
 * Moving a pooled message from a device that dropped out of its pool to another, in steps that
 * may each be repeated after a crash, so that the message is sent once (by one device) and never
 * lost:
 *   1. `begin`: the journal (in the pool's slot) names the device it goes to, once: a repeat or a
 *      second mover finds the same target.
 *   2. `release` on the device it leaves (its slot, atomic with its claim): taken off only while
 *      its send never began there; from then on that device never sends it. `taken`: it stays;
 *      `busy`: an attempt is under way there, the next round asks again.
 *   3. the device it goes to accepts it with the same messageId (the caller: the API's pool mover).
 *   4. `releaseContent` on the device it left, then `finish`: the journal entry goes.
 * The journal is read again at the mover's next round, so a move a crash cut short is finished.
 * A target that refuses the message for good (logged out between steps 1 and 3) is replaced by
 * `retarget`, once, for every mover: the message was accepted nowhere, so it goes to one device.
 */
export class PoolMoves {
  constructor(
    private readonly redis: RedisClient,
    private readonly retentionSeconds: number,
  ) {}

  /** Step 1: the move's target, fixed once (an unfinished move of the message keeps its own). */
  async begin(poolId: string, move: PoolMove): Promise<PoolMove> {
    const key = keys.poolMoves(poolId);
    const entry = JSON.stringify({
      from: move.from,
      to: move.to,
      batchId: move.batchId,
      reason: move.reason,
    });
    const [[, set], [, stored]] = (await this.redis
      .multi()
      .hsetnx(key, move.messageId, entry)
      .hget(key, move.messageId)
      .exec()) as [[null, number], [null, string | null]];
    if (set === 1 || !stored) return move;
    return { messageId: move.messageId, ...(JSON.parse(stored) as Omit<PoolMove, 'messageId'>) };
  }

  /** Moves begun and not finished (a crash cut them short): the mover finishes them first. */
  async unfinished(poolId: string): Promise<PoolMove[]> {
    const h = await this.redis.hgetall(keys.poolMoves(poolId));
    return Object.entries(h).map(([messageId, v]) => ({
      messageId,
      ...(JSON.parse(v) as Omit<PoolMove, 'messageId'>),
    }));
  }

  /** Step 2 on the device the message leaves (`job.deviceId`): see `lua/pool-release-4.lua`. */
  release(job: SendJobData, to: string): Promise<ReleaseOutcome> {
    return RELEASE.run(
      this.redis,
      [
        keys.message(job.deviceId, job.messageId),
        keys.batch(job.deviceId, job.batchId ?? ''),
        keys.batchHeld(job.deviceId, job.batchId ?? ''),
        keys.deviceQueue(job.deviceId),
      ],
      [job.messageId, to, this.retentionSeconds, job.sendAt !== undefined ? '1' : '0'],
    );
  }

  /** Step 4: the message leaves the content on the device it left (once). */
  async releaseContent(job: SendJobData): Promise<void> {
    await CONTENT_RELEASE.run(
      this.redis,
      [
        keys.message(job.deviceId, job.messageId),
        keys.content(job.deviceId, job.contentId),
        keys.deviceQueue(job.deviceId),
      ],
      [],
    );
  }

  /**
   * Points an unfinished move at `to` instead of `from` (the device it was to go to, which refused
   * it for good); false when the move is finished or already names another device.
   */
  async retarget(poolId: string, messageId: string, from: string, to: string): Promise<boolean> {
    return (await RETARGET.run(this.redis, [keys.poolMoves(poolId)], [messageId, from, to])) === 1;
  }

  /** The end of a move (or of one that did not happen: `taken`): the journal forgets it. */
  async finish(poolId: string, messageId: string): Promise<void> {
    await this.redis.hdel(keys.poolMoves(poolId), messageId);
  }
}
