import { PassThrough } from 'node:stream';
import { createLogger } from '@mgw/common';
import { keys } from '@mgw/contracts';
import type { PoolRecord } from '@mgw/store';
import { loadApiConfig } from '../../config.js';
import type { MemoryRedis } from '../test-support.js';

/**
 * TEST SUPPORT, not used by the API (left out of the build): what the pools' fast tests
 * (`<use-case>.test.ts` beside each) share, without an API or Redis — a pool's definition and its
 * devices' state in an in-memory Redis (as the API and the senders write them), the config, a
 * silent logger; for the admin's, a pool's record and the pool and token stores faked.
 */
export const config = loadApiConfig({ ...process.env, NODE_ENV: 'test' });
export const quietLogger = () =>
  createLogger({ level: 'silent', service: 'pools-test', stream: new PassThrough() });
export const poolId = 'pool-1';

/** How a test leaves a pool's devices and the pool in `redis`. */
export function poolState(redis: MemoryRedis) {
  /** A device of the pool as its sender leaves it: connected or not, and what it holds. */
  const device = (deviceId: string, status = 'connected', queued = 0) => {
    redis.hash(keys.session(deviceId), { status });
    if (queued) redis.hash(keys.deviceQueue(deviceId), { messages: String(queued) });
  };
  const define = (...devices: string[]) =>
    redis.hash(keys.pool(poolId), { devices: JSON.stringify(devices) });
  return { device, define };
}

/** A pool's record. */
export const pool = (id: string, devices: string[], workspace = 'default'): PoolRecord => ({
  id,
  name: id,
  devices,
  workspace,
  otpFallback: false,
  createdAt: '',
  updatedAt: '',
});

/** The pool and token stores over what the test keeps. */
export const poolStores = (
  pools: Map<string, PoolRecord>,
  tokens: { id: string; name: string; poolId?: string }[],
) => ({
  pools: {
    get: async (id: string) => pools.get(id),
    delete: async (id: string) => pools.delete(id),
  },
  tokens: { list: async () => tokens },
});
