import type { ClientRateLimitInfo, Options, Store } from 'express-rate-limit';
import type { RedisStore } from 'rate-limit-redis';

/**
 * Adds `hits` to a counter in one call, with rate-limit-redis's window: a counter that has
 * expired (or never existed) starts a new window of `windowMs` at this call. Returns
 * [total, ms left in the window].
 */
const INCREMENT_BY = `
local windowMs = tonumber(ARGV[1])
local hits = tonumber(ARGV[2])
local ttl = redis.call("PTTL", KEYS[1])
if ttl <= 0 then
  redis.call("SET", KEYS[1], hits, "PX", windowMs)
  return { hits, windowMs }
end
return { redis.call("INCRBY", KEYS[1], hits), ttl }
`;

/** How old Redis's count of a token may be for a hit to be admitted without asking Redis again. */
export const FRESH_MS = 100;
/** Longest a hit admitted ahead waits before it is sent to Redis. */
export const AHEAD_FLUSH_MS = 2;
/** Past this share of its limit, every hit of a window is counted in Redis before it is answered. */
export const ADMIT_AHEAD_SHARE = 0.5;

/** What this process knows of one counter. */
interface Counter {
  /** Redis's count at the last reply. */
  known: number;
  /** Hits sent to Redis and not yet in `known`. */
  sending: number;
  /** Hits admitted here, to be sent with the next flush. */
  unsent: number;
  /** When Redis's window ends (epoch ms, by this clock). */
  resetAt: number;
  /** When `known` was read (epoch ms); never for a counter not read yet. */
  readAt: number;
}

interface Waiter {
  resolve(info: ClientRateLimitInfo): void;
  reject(err: unknown): void;
}

/**
 * A store for express-rate-limit that keeps rate-limit-redis's counters (the same keys, fixed
 * windows and scripts, shared by every replica) and sends a counter's hits to Redis together, as
 * one increment: those of one turn of the event loop, and a busy token's admitted ahead (below)
 * within `AHEAD_FLUSH_MS`. A hit waits for Redis's count when this process does not
 * know the counter well: the first hit of a token, a hit after `FRESH_MS` without a reply from
 * Redis about it, a hit past `ADMIT_AHEAD_SHARE` of the limit, the first of a new window. Any
 * other hit — a busy token well within its limit — is admitted on the count last read plus the
 * hits this process has admitted since, and goes to Redis with the next increment (within
 * `AHEAD_FLUSH_MS`).
 *
 * So a refusal is always decided on Redis's count, and one replica alone never admits more than
 * the limit. A replica counting ahead has not seen what the other replicas admitted since its
 * last read (at most `FRESH_MS` ago): with several replicas busy with one token, the token goes
 * over its limit only if the others admit more than half of it within that time.
 *
 * get, decrement and resetKey are rate-limit-redis's own.
 */
export class CoalescingRedisStore implements Store {
  readonly localKeys = false;
  readonly prefix: string;
  private limit: number | undefined;
  private windowMs = 60_000;
  private incrementBySha: Promise<string> | undefined;
  private readonly counters = new Map<string, Counter>();
  /** Counters to send at the end of this turn, with the hits that wait for the reply. */
  private readonly due = new Map<string, Waiter[]>();
  private flushSoon: NodeJS.Immediate | undefined;
  private flushLater: NodeJS.Timeout | undefined;
  private nextSweep = 0;

  constructor(
    private readonly redisStore: RedisStore,
    private readonly opts: {
      /**
       * Whether a busy token's hits may be admitted ahead of Redis. Only for endpoints whose work
       * writes to Redis itself (so a Redis that refuses writes still gets them a 503).
       */
      admitAhead: boolean;
      /** Hits admitted ahead of Redis that could not be sent (they are not counted). */
      onLostHits: (err: unknown, hits: number) => void;
      freshMs?: number;
    },
  ) {
    this.prefix = redisStore.prefix;
  }

  init(options: Options): Promise<void> {
    this.windowMs = options.windowMs;
    this.limit = typeof options.limit === 'number' ? options.limit : undefined;
    this.incrementBySha = this.loadScript();
    return Promise.all([this.redisStore.init(options), this.incrementBySha]).then(() => undefined);
  }

  get(key: string): Promise<ClientRateLimitInfo | undefined> {
    return this.redisStore.get(key);
  }

  async decrement(key: string): Promise<void> {
    await this.redisStore.decrement(key);
    const counter = this.counters.get(key);
    if (counter) counter.known = Math.max(0, counter.known - 1);
  }

  async resetKey(key: string): Promise<void> {
    this.counters.delete(key);
    await this.redisStore.resetKey(key);
  }

  increment(key: string): Promise<ClientRateLimitInfo> | ClientRateLimitInfo {
    const now = Date.now();
    const c = this.counters.get(key);
    const freshMs = this.opts.freshMs ?? FRESH_MS;
    if (
      c &&
      this.opts.admitAhead &&
      this.limit !== undefined &&
      now < c.resetAt &&
      now - c.readAt <= freshMs
    ) {
      const total = c.known + c.sending + c.unsent + 1;
      if (total <= this.limit * ADMIT_AHEAD_SHARE) {
        c.unsent++;
        this.schedule(key);
        return { totalHits: total, resetTime: new Date(c.resetAt) };
      }
    }
    return new Promise((resolve, reject) => this.schedule(key, { resolve, reject }));
  }

  /**
   * A hit that waits is sent at the end of this turn; hits admitted ahead alone wait up to
   * `AHEAD_FLUSH_MS` for company (a busy token's hits of a few turns go as one increment).
   */
  private schedule(key: string, waiter?: Waiter): void {
    let waiting = this.due.get(key);
    if (!waiting) this.due.set(key, (waiting = []));
    if (waiter) {
      waiting.push(waiter);
      if (!this.flushSoon) this.flushSoon = setImmediate(this.flush);
    } else if (!this.flushSoon && !this.flushLater) {
      this.flushLater = setTimeout(this.flush, AHEAD_FLUSH_MS);
    }
  }

  private readonly flush = (): void => {
    if (this.flushSoon) clearImmediate(this.flushSoon);
    if (this.flushLater) clearTimeout(this.flushLater);
    this.flushSoon = this.flushLater = undefined;
    const now = Date.now();
    for (const [key, waiting] of this.due) {
      let c = this.counters.get(key);
      if (!c)
        this.counters.set(key, (c = { known: 0, sending: 0, unsent: 0, resetAt: 0, readAt: -Infinity }));
      const ahead = c.unsent;
      const hits = ahead + waiting.length;
      c.unsent = 0;
      c.sending += hits;
      void this.send(key, hits).then(
        ([total, ttlMs]) => {
          const at = Date.now();
          c.sending -= hits;
          c.known = total;
          c.resetAt = at + ttlMs;
          c.readAt = at;
          const resetTime = new Date(c.resetAt);
          // The waiting hits are the last of this increment.
          waiting.forEach((w, i) => w.resolve({ totalHits: total - waiting.length + 1 + i, resetTime }));
        },
        (err: unknown) => {
          c.sending -= hits;
          // Whatever this process knew is in doubt: the next hit asks Redis.
          c.readAt = -Infinity;
          for (const w of waiting) w.reject(err);
          if (ahead > 0) this.opts.onLostHits(err, ahead);
        },
      );
    }
    this.due.clear();
    if (now >= this.nextSweep) this.sweep(now);
  };

  /** Forgets counters whose window is over (their next hit asks Redis anyway). */
  private sweep(now: number): void {
    this.nextSweep = now + this.windowMs;
    for (const [key, c] of this.counters) {
      if (c.resetAt < now && c.sending === 0 && c.unsent === 0) this.counters.delete(key);
    }
  }

  private async send(key: string, hits: number): Promise<[number, number]> {
    const redisKey = this.redisStore.prefixKey(key);
    let sha: string;
    try {
      sha = await this.incrementBySha!;
    } catch {
      // Redis was unreachable when the script was loaded: load it now.
      sha = await (this.incrementBySha = this.loadScript());
    }
    const reply = await this.redisStore.sendCommand({
      key: redisKey,
      isReadOnly: false,
      command: ['EVALSHA', sha, '1', redisKey, String(this.windowMs), String(hits)],
    });
    if (!Array.isArray(reply) || reply.length !== 2) throw new TypeError('unexpected reply from Redis');
    return [Number(reply[0]), Number(reply[1])];
  }

  private async loadScript(): Promise<string> {
    const sha = await this.redisStore.sendCommand({
      isReadOnly: false,
      command: ['SCRIPT', 'LOAD', INCREMENT_BY],
    });
    if (typeof sha !== 'string') throw new TypeError('unexpected reply from Redis');
    return sha;
  }
}
