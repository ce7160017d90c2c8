import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { storeScript } from '../lua.js';

const ADMIT = storeScript<number>('connect-admit-1');

/** The bound of a token bucket: `rate` tokens a second, at most `burst` kept. */
export interface ConnectRate {
  ratePerSecond: number;
  burst: number;
}

/**
 * The token bucket in Redis that bounds how many device sockets the senders of one scope (the
 * install, or one host) open a second, whichever sender opens them (`lua/connect-admit-1.lua`).
 * Every sender of a scope must be given the same rate and burst.
 */
export class ConnectBucket {
  private readonly key: string;

  constructor(
    private readonly redis: RedisClient,
    scope: string,
    private readonly rate: ConnectRate,
  ) {
    this.key = keys.connectBucket(scope);
  }

  /** Takes one token: 0 when taken, else how many ms until one will be there. */
  take(): Promise<number> {
    return ADMIT.run(this.redis, [this.key], [this.rate.ratePerSecond, Math.max(1, this.rate.burst)]);
  }
}
