import type { ClientRateLimitInfo, Options, Store } from 'express-rate-limit';
import type { RedisStore } from 'rate-limit-redis';
import { RATE_LIMIT_INCREMENT } from '@mgw/store';

interface Waiter {
  resolve(info: ClientRateLimitInfo): void;
  reject(err: unknown): void;
}

/**
 * A store for express-rate-limit that keeps rate-limit-redis's counters (the same keys, fixed
 * windows and scripts, shared by every replica) and sends a counter's hits of one turn of the
 * event loop to Redis together, as one increment, each hit still getting its own count. Every hit
 * waits for Redis's count, so a refusal is decided on it and no replica admits past the limit.
 * (`/send` counts its hits in the accept script's calls that write its messages, see `SendRateLimit`.)
 *
 * get, decrement and resetKey are rate-limit-redis's own.
 */
export class CoalescingRedisStore implements Store {
  readonly localKeys = false;
  readonly prefix: string;
  private windowMs = 60_000;
  private incrementBySha: Promise<string> | undefined;
  /** Counters to send at the end of this turn, with the hits that wait for the reply. */
  private readonly due = new Map<string, Waiter[]>();
  private flushSoon: NodeJS.Immediate | undefined;

  constructor(private readonly redisStore: RedisStore) {
    this.prefix = redisStore.prefix;
  }

  init(options: Options): Promise<void> {
    this.windowMs = options.windowMs;
    this.incrementBySha = this.loadScript();
    return Promise.all([this.redisStore.init(options), this.incrementBySha]).then(() => undefined);
  }

  get(key: string): Promise<ClientRateLimitInfo | undefined> {
    return this.redisStore.get(key);
  }

  async decrement(key: string): Promise<void> {
    await this.redisStore.decrement(key);
  }

  async resetKey(key: string): Promise<void> {
    await this.redisStore.resetKey(key);
  }

  /** A hit waits for Redis's count: sent at the end of this turn with the counter's other hits. */
  increment(key: string): Promise<ClientRateLimitInfo> {
    return new Promise((resolve, reject) => {
      let waiting = this.due.get(key);
      if (!waiting) this.due.set(key, (waiting = []));
      waiting.push({ resolve, reject });
      this.flushSoon ??= setImmediate(this.flush);
    });
  }

  private readonly flush = (): void => {
    this.flushSoon = undefined;
    for (const [key, waiting] of this.due) {
      const hits = waiting.length;
      void this.send(key, hits).then(
        ([total, ttlMs]) => {
          const resetTime = new Date(Date.now() + ttlMs);
          // The waiting hits are the last of this increment.
          waiting.forEach((w, i) => w.resolve({ totalHits: total - hits + 1 + i, resetTime }));
        },
        (err: unknown) => {
          for (const w of waiting) w.reject(err);
        },
      );
    }
    this.due.clear();
  };

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
      command: ['SCRIPT', 'LOAD', RATE_LIMIT_INCREMENT.lua],
    });
    if (typeof sha !== 'string') throw new TypeError('unexpected reply from Redis');
    return sha;
  }
}
