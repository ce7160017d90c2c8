import { PassThrough } from 'node:stream';
import type { Redis } from 'ioredis';
import { closeRedis, createLogger, createRedis, waitForRedis } from '@mgw/common';
import { createMetrics } from '@mgw/contracts';
import { Encryption } from '@mgw/store';
import { createApiServices, type ApiServices } from '../../src/api-services.js';
import { loadApiConfig } from '../../src/config.js';

/** The API's services without its HTTP server, for testing use cases that need more than a holder. */
export interface UseCaseServices {
  services: ApiServices;
  /** The services' own Redis connection (the run's REDIS_URL). */
  redis: Redis;
  close(): Promise<void>;
}

/**
 * Builds the API's services as `main.ts` does, on the run's real Redis (REDIS_URL, started by the
 * mocha fixtures), with their three connections named after the test and a silent logger. Close
 * it in an `after` hook.
 */
export async function openUseCaseServices(name: string): Promise<UseCaseServices> {
  const config = loadApiConfig({ ...process.env, NODE_ENV: 'test' });
  const redis = createRedis(config.redis.url, 'producer', name);
  const bull = createRedis(config.redis.url, 'producer', `${name}-bull`);
  const subscriber = createRedis(config.redis.url, 'subscriber', `${name}-sub`);
  await waitForRedis(redis, 5000);
  const services = createApiServices({
    config,
    logger: createLogger({ level: 'error', service: name, stream: new PassThrough() }),
    redis,
    bullRedis: bull,
    subscriber,
    metrics: createMetrics(),
    encryption: Encryption.fromConfig(config.encryption),
  });
  return {
    services,
    redis,
    close: async () => {
      await services.close();
      await closeRedis(redis, bull, subscriber);
    },
  };
}
