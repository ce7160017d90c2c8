import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';

// Entries are scored by their expiry on the Redis server's clock (see the connection service's
// Liveness), so the API's own clock does not matter.
const COUNT_ALIVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], now, '+inf')
`;

/**
 * Whether any connection service process is alive, read from `keys.connectionWorkers()`. A
 * "yes" is cached for `cacheMs`, so a burst of /connect costs one Redis call per second, not one
 * each; a "no" is not cached (concurrent checks still share one call), so a connection service
 * that has just started is used by the next request, not a second later.
 * A Redis error propagates (the request then answers 503 storage unavailable).
 */
export class ConnectionLiveness {
  private aliveAt: number | undefined;
  private checking: Promise<boolean> | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly cacheMs = 1000,
  ) {}

  async alive(): Promise<boolean> {
    if (this.aliveAt !== undefined && Date.now() - this.aliveAt < this.cacheMs) return true;
    this.checking ??= this.check().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async check(): Promise<boolean> {
    const n = (await this.redis.eval(COUNT_ALIVE, 1, keys.connectionWorkers())) as number;
    this.aliveAt = n > 0 ? Date.now() : undefined;
    return n > 0;
  }
}
