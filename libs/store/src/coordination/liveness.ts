// Narrow imports only (never a package index): the sender's lease-renewer thread loads this module
// through `@mgw/store/coordination` (see lease.ts).
import type { RedisClient } from '@mgw/common'; // a type: erased, loads nothing
import { storeScript } from '../lua.js';

/**
 * Process liveness, the one mechanism every service that beats uses: a sorted set per kind of
 * process (lease owner id scored by when its liveness expires, on the Redis clock, so hosts with
 * skewed clocks still agree). A process beats to stay in it; the others read it to tell a dead
 * process from a live one sooner than its leases would lapse (a sender's devices are taken over, a
 * connection service's pairing is stale, the API answers 503 when no connection service is
 * alive). The Lua lives in `lua/liveness-*.lua`; what differs between the users (the set, the
 * TTL, how long an expired entry is kept) is parameters.
 */
const BEAT = storeScript<[number, string[]]>('liveness-beat-1');
const IS_ALIVE = storeScript<number>('liveness-alive-1');
const COUNT_ALIVE = storeScript<number>('liveness-count-1');

export interface LivenessSetOptions {
  /** The sorted set (one per kind of process, e.g. `keys.senderLiveness()`). */
  key: string;
  /** A beat keeps the owner live this long; others see it dead once it expired. */
  ttlMs: number;
  /**
   * Entries expired at least this long ago are dropped by each beat (at least the lease TTL when
   * their leases are taken over by it; 1: every expired entry).
   */
  forgetMs: number;
}

/** One beat's answer: the Redis time and the owners whose liveness has expired (kept ones). */
export interface BeatReply {
  now: number;
  expired: string[];
}

/** A liveness set: beaten by its members, read by anyone. */
export class LivenessSet {
  constructor(
    private readonly redis: RedisClient,
    readonly opts: LivenessSetOptions,
  ) {}

  /** One beat of `owner` (`alive` false: do not beat, only look and forget). */
  async beat(owner: string, alive = true): Promise<BeatReply> {
    const [now, expired] = await BEAT.run(
      this.redis,
      [this.opts.key],
      [owner, this.opts.ttlMs, this.opts.forgetMs, alive ? 1 : 0],
    );
    return { now: Number(now), expired };
  }

  /** Whether `owner`'s liveness has not expired (Redis clock). */
  async isAlive(owner: string): Promise<boolean> {
    return (await IS_ALIVE.run(this.redis, [this.opts.key], [owner])) === 1;
  }

  /** How many members are alive now (Redis clock). */
  async countAlive(): Promise<number> {
    return COUNT_ALIVE.run(this.redis, [this.opts.key]);
  }

  /** Takes `owner` out of the set at once (clean shutdown). */
  async leave(owner: string): Promise<void> {
    await this.redis.zrem(this.opts.key, owner);
  }
}

/**
 * A beat every twelfth of the liveness TTL: eleven beats in a row may fail before it expires. A
 * killed owner's liveness expires between a beat and a TTL after the kill and the others see it
 * within a beat of that, so the takeover comes a TTL ± a beat after the kill (3 s ± 0.25 s by
 * default). One small script per beat: beating twice as often as a sixth halves that spread.
 */
export const livenessBeatMs = (ttlMs: number): number => Math.max(100, Math.floor(ttlMs / 12));

/**
 * Beats and judges, for a fast takeover: owners whose liveness expired are called dead only once
 * this process has itself beaten without a gap for a whole TTL. After a Redis outage or a slow
 * spell (or a freeze of this process) every entry may look expired; waiting one TTL gives every
 * live process time to beat again, so only those that really stopped are taken over. A gap is
 * half the TTL between two successful beats: shorter, and no other process can have missed a
 * whole TTL in the same spell (its beats are at most a beat interval apart from ours, on either
 * side). Epoch fencing (lease.ts) stays the safety net for a process that only looked dead (frozen
 * whole, cut off from Redis): its next renewal finds the lease `lost`, its writes are refused.
 */
export class Liveness {
  private readonly set: LivenessSet;
  private lastOkAt: number | undefined;
  private healthySince = 0;

  constructor(
    redis: RedisClient,
    private readonly owner: string,
    private readonly opts: LivenessSetOptions,
  ) {
    this.set = new LivenessSet(redis, opts);
  }

  /** One beat (`alive` false: do not beat, only look); the owners judged dead, this one excepted. */
  async beat(alive = true): Promise<string[]> {
    const { now, expired } = await this.set.beat(this.owner, alive);
    return this.judge(now, expired, alive);
  }

  /** The dead owners among `expired`, seen at Redis time `now` (exported for the unit tests). */
  judge(now: number, expired: readonly string[], alive = true): string[] {
    if (!alive || this.lastOkAt === undefined || now - this.lastOkAt >= this.opts.ttlMs / 2)
      this.healthySince = now;
    this.lastOkAt = alive ? now : undefined;
    if (now - this.healthySince < this.opts.ttlMs) return [];
    return expired.filter((o) => o !== this.owner);
  }

  /** Leaves the set (clean shutdown, after every lease was released). */
  async leave(): Promise<void> {
    await this.set.leave(this.owner);
  }
}
