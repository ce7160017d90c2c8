import type { Redis } from 'ioredis';

export interface FilledRedis {
  /** The refusal of the last write (`OOM command not allowed …`). */
  refusal: Error;
  /** `maxmemory` after the fill: set 1 MiB below what Redis uses. */
  maxBytes: number;
}

const MARGIN = 1024 * 1024;

/**
 * Fills a Redis started with a small `--maxmemory` (and noeviction) until it refuses writes, then
 * lowers `maxmemory` 1 MiB below what it uses: right at the edge, small frees (an expired key, a
 * client's query buffer) would let the odd write through again and make tests flaky. Values
 * shrink as it goes, because a large command's own query buffer counts as used memory while it
 * runs. Keys are `fill:*`; FLUSHDB (and `CONFIG SET maxmemory`) to recover.
 */
export async function fillRedisToMaxmemory(redis: Redis, maxKeys = 50_000): Promise<FilledRedis> {
  let written = 0;
  let refused = false;
  for (const size of [64 * 1024, 1024]) {
    const value = 'x'.repeat(size);
    for (; written < maxKeys; written++) {
      try {
        await redis.set(`fill:${size}:${written}`, value);
      } catch {
        refused = true;
        break;
      }
    }
  }
  if (!refused) throw new Error(`Redis accepted ${maxKeys} writes: is --maxmemory set?`);
  const used = Number(/^used_memory:(\d+)/m.exec(await redis.info('memory'))?.[1]);
  const maxBytes = Math.max(MARGIN, used - MARGIN);
  await redis.config('SET', 'maxmemory', String(maxBytes));
  try {
    await redis.set('fill:probe', 'x');
  } catch (err) {
    return { refusal: err as Error, maxBytes };
  }
  throw new Error('Redis still accepts writes after lowering maxmemory');
}
