// Narrow entries only: the renewer thread loads this module (see lease.ts).
import type { RedisClient } from '@mgw/common'; // a type: erased, loads nothing
import { RedisScript } from '@mgw/common/redis-scripts';

/**
 * Process liveness for a fast takeover: every lease-holding process beats into one sorted set
 * (owner id scored by when its liveness expires, Redis clock) from its lease-renewer thread, so a
 * busy event loop never stops the beat; a process killed with SIGKILL stops beating, and once its
 * liveness expired the others may take its devices over although its leases still have time left
 * (see ACQUIRE in lease.ts). Epoch fencing stays the safety net for a process that only looked
 * dead (frozen whole, cut off from Redis): its next renewal finds the lease `lost`, its writes are
 * refused.
 *
 * One script per beat: write this owner's expiry (unless `beat` is 0: a hung process lets it
 * run out), forget entries expired longer than `forgetMs` (their leases have lapsed by then) and
 * answer the Redis time with the owners whose liveness has expired.
 * KEYS: the liveness set. ARGV: owner, ttl ms, forget ms, beat (1/0).
 */
const BEAT = new RedisScript<[number, string[]]>(
  'mgwLivenessBeat',
  `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[4] == '1' then redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1]) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[3]))
return {now, redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)}
`,
);

export interface LivenessOptions {
  /** The sorted set (one per kind of process, e.g. `keys.senderLiveness()`). */
  key: string;
  /** A beat keeps the owner live this long; others see it dead once it expired. */
  ttlMs: number;
  /** Entries expired longer than this are dropped (at least the lease TTL). */
  forgetMs: number;
}

/**
 * A beat every twelfth of the liveness TTL: eleven beats in a row may fail before it expires. A
 * killed owner's liveness expires between a beat and a TTL after the kill and the others see it
 * within a beat of that, so the takeover comes a TTL ± a beat after the kill (3 s ± 0.25 s by
 * default). One small script per beat: beating twice as often as a sixth halves that spread.
 */
export const livenessBeatMs = (ttlMs: number): number => Math.max(100, Math.floor(ttlMs / 12));

/**
 * Beats and judges: owners whose liveness expired are called dead only once this process has
 * itself beaten without a gap for a whole TTL. After a Redis outage or a slow spell (or a freeze of
 * this process) every entry may look expired; waiting one TTL gives every live process time to beat
 * again, so only those that really stopped are taken over. A gap is half the TTL between two
 * successful beats: shorter, and no other process can have missed a whole TTL in the same spell
 * (its beats are at most a beat interval apart from ours, on either side).
 */
export class Liveness {
  private lastOkAt: number | undefined;
  private healthySince = 0;

  constructor(
    private readonly redis: RedisClient,
    private readonly owner: string,
    private readonly opts: LivenessOptions,
  ) {}

  /** One beat (`alive` false: do not beat, only look); the owners judged dead, this one excepted. */
  async beat(alive = true): Promise<string[]> {
    const [now, expired] = await BEAT.run(
      this.redis,
      [this.opts.key],
      [this.owner, this.opts.ttlMs, this.opts.forgetMs, alive ? 1 : 0],
    );
    return this.judge(Number(now), expired, alive);
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
    await this.redis.zrem(this.opts.key, this.owner);
  }
}
