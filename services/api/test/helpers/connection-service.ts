import type { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';

/**
 * Puts an entry in the connection service's liveness set, as a running connection service does
 * (score = expiry, ms), so the API sends it requests. Returns the withdrawal.
 */
export async function announceConnectionService(
  redis: Redis,
  validForMs = 3_600_000,
): Promise<() => Promise<void>> {
  const member = `test-connection-${Math.random().toString(36).slice(2, 8)}`;
  await redis.zadd(keys.connectionWorkers(), Date.now() + validForMs, member);
  return async () => {
    await redis.zrem(keys.connectionWorkers(), member);
  };
}
