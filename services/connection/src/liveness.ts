import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import { CONNECTION_LIVENESS, keys } from '@mgw/contracts';

// Scores are expiry times on the Redis server's clock, so hosts with skewed clocks still agree.
const BEAT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
return 1
`;

const IS_ALIVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) >= now then return 1 end
return 0
`;

/**
 * This process's entry in the connection service's liveness set (see CONNECTION_LIVENESS), and
 * the check whether another process (by its lease owner id) is still alive: a pairing record or
 * a running disconnect whose process died is stale at once, not only when its lease runs out.
 */
export class Liveness {
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  /** performance.now() when the last beat that Redis took was sent; undefined when not announced. */
  private beatSentAt: number | undefined;
  private stopped = false;

  constructor(
    private readonly redis: RedisClient,
    readonly owner: string,
    private readonly logger: Logger,
    private readonly beatMs: number = CONNECTION_LIVENESS.beatMs,
    private readonly ttlMs: number = CONNECTION_LIVENESS.ttlMs,
  ) {}

  /** Announces this process now and every beat until `stop`. */
  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => {
      // A slow Redis must not stack beats.
      if (this.beating) return;
      this.beating = this.beat()
        .catch((err: unknown) => {
          this.logger.warn('liveness not announced', { err: serializeError(err) });
        })
        .finally(() => (this.beating = undefined));
    }, this.beatMs);
  }

  /** Withdraws this process at once, so the API stops sending it work. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    this.stopped = true;
    this.beatSentAt = undefined;
    await this.redis.zrem(keys.connectionWorkers(), this.owner).catch(() => undefined);
  }

  /**
   * Whether this process counts as alive in the set now, by its own clock: started, not stopped,
   * and its last accepted beat is younger than the TTL (the entry expires later than that).
   */
  announced(): boolean {
    return this.beatSentAt !== undefined && performance.now() - this.beatSentAt < this.ttlMs;
  }

  async isAlive(owner: string): Promise<boolean> {
    return (await this.redis.eval(IS_ALIVE, 1, keys.connectionWorkers(), owner)) === 1;
  }

  private async beat(): Promise<void> {
    const sentAt = performance.now();
    await this.redis.eval(BEAT, 1, keys.connectionWorkers(), this.owner, String(this.ttlMs));
    // A beat that lands after stop() announces nothing.
    if (!this.stopped) this.beatSentAt = sentAt;
  }
}
