import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';

/** The messaging tier's moving window. */
export const REACH_WINDOW_MS = 24 * 60 * 60 * 1000;

/** A contact counted against the tier for one message: given back when the message did not go. */
export interface Reached {
  giveBack(): Promise<void>;
}

/**
 * The messaging tier's unique contacts (keys.cloudReached): the contacts a cloud device messaged
 * outside an open window in the last 24 hours, each by the time of its last such message. A
 * contact already there goes again freely; a new one only while fewer than the tier's limit are.
 * Takes run one after another in this process (it holds the device's lease), so a check and its
 * write never interleave with another message's.
 */
export class CloudReach {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly redis: RedisClient,
    private readonly deviceId: string,
  ) {}

  /** Counts `waId` now, or answers false when it is a new contact past `limit`. */
  take(waId: string, limit: number, now = Date.now()): Promise<Reached | false> {
    const turn = this.chain.then(() => this.takeNow(waId, limit, now));
    this.chain = turn.catch(() => undefined);
    return turn;
  }

  private async takeNow(waId: string, limit: number, now: number): Promise<Reached | false> {
    const key = keys.cloudReached(this.deviceId);
    const [, score, count] = (await this.redis
      .multi()
      .zremrangebyscore(key, '-inf', now - REACH_WINDOW_MS)
      .zscore(key, waId)
      .zcard(key)
      .exec())!.map(([err, value]) => {
      if (err) throw err;
      return value;
    }) as [number, string | null, number];
    if (score === null && count >= limit) return false;
    await this.redis.multi().zadd(key, now, waId).pexpire(key, REACH_WINDOW_MS).exec();
    const earlier = score === null ? undefined : Number(score);
    return {
      // Only while the entry is still this message's: a later message to the contact keeps its own.
      giveBack: () => {
        const back = this.chain.then(async () => {
          if (Number(await this.redis.zscore(key, waId)) !== now) return;
          if (earlier === undefined) await this.redis.zrem(key, waId);
          else await this.redis.zadd(key, earlier, waId);
        });
        this.chain = back.catch(() => undefined);
        return back;
      },
    };
  }
}
