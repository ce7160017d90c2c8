import type { RedisClient } from '@mgw/common';
import { CONNECTION_LIVENESS, keys } from '@mgw/contracts';
import { LivenessSet } from '@mgw/store';

/**
 * Whether any connection service process is alive, read from `keys.connectionWorkers()` (a
 * `LivenessSet` of @mgw/store, scored on the Redis server's clock, so the API's own clock does not
 * matter). A "yes" is cached for `cacheMs`, so a burst of /connect costs one Redis call per
 * second, not one each; a "no" is not cached (concurrent checks still share one call), so a
 * connection service that has just started is used by the next request, not a second later.
 * A Redis error propagates (the request then answers 503 storage unavailable).
 */
export class ConnectionLiveness {
  private aliveAt: number | undefined;
  private checking: Promise<boolean> | undefined;
  private readonly set: LivenessSet;

  constructor(
    redis: RedisClient,
    private readonly cacheMs = 1000,
  ) {
    // Only read here: the connection services beat it with their own TTL and forget.
    this.set = new LivenessSet(redis, {
      key: keys.connectionWorkers(),
      ttlMs: CONNECTION_LIVENESS.ttlMs,
      forgetMs: 1,
    });
  }

  async alive(): Promise<boolean> {
    if (this.aliveAt !== undefined && Date.now() - this.aliveAt < this.cacheMs) return true;
    this.checking ??= this.check().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async check(): Promise<boolean> {
    const n = await this.set.countAlive();
    this.aliveAt = n > 0 ? Date.now() : undefined;
    return n > 0;
  }
}
