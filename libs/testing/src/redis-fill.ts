import type { Redis } from 'ioredis';

/**
 * Fills a Redis started with a small `--maxmemory` (and noeviction) until it refuses even a tiny
 * write; returns that refusal (`OOM command not allowed …`). Values shrink as it goes, because a
 * large command's own query buffer counts as used memory while it runs: a refused 64 KiB write
 * can leave room for small ones. Keys are `fill:*` (delete them, or FLUSHDB, to free the memory).
 */
export async function fillRedisToMaxmemory(redis: Redis, maxKeys = 50_000): Promise<Error> {
  let refusal: Error | undefined;
  let written = 0;
  for (const size of [64 * 1024, 1024, 16]) {
    const value = 'x'.repeat(size);
    for (; written < maxKeys; written++) {
      try {
        await redis.set(`fill:${size}:${written}`, value);
      } catch (err) {
        refusal = err as Error;
        break;
      }
    }
  }
  if (!refusal) throw new Error(`Redis accepted ${maxKeys} writes: is --maxmemory set?`);
  return refusal;
}
