import type { RedisClient } from '@mgw/common';
import { storeScript } from '../lua.js';

const SWAP = storeScript<number>('idempotency-swap-1');

/**
 * Replaces the Idempotency-Key record at `key` with `next` (sealed; `''` frees the key) only while
 * it still holds `expected` (see `lua/idempotency-swap-1.lua`): true when it did.
 */
export async function swapIdempotencyRecord(
  redis: RedisClient,
  key: string,
  expected: string,
  next: string,
  ttlSeconds: number,
): Promise<boolean> {
  return (await SWAP.run(redis, [key], [expected, next, String(ttlSeconds)])) === 1;
}
