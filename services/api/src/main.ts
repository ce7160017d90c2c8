import {
  closeRedis,
  createDefaultMetricsRegistry,
  createLogger,
  createRedis,
  installShutdown,
  serializeError,
  waitForRedis,
} from '@mgw/common';
import { createMetrics } from '@mgw/contracts';
import { Encryption } from '@mgw/store';
import { createApiServices } from './api-services.js';
import { createApp } from './app.js';
import { loadApiConfig } from './config.js';
import { createHttpServer } from './http-server.js';
import { startApiOps } from './routes/ops.js';

async function main(): Promise<void> {
  const config = loadApiConfig();
  const logger = createLogger({ level: config.logLevel, service: 'api' });
  // Concurrent requests' commands share writes (auto-pipelining): fewer syscalls per request.
  const redis = createRedis(config.redis, 'producer', 'api', { enableAutoPipelining: true });
  const bullRedis = createRedis(config.redis, 'producer', 'api-bull');
  const subscriber = createRedis(config.redis, 'subscriber', 'api-sub');
  try {
    await Promise.all([waitForRedis(redis, 10_000), waitForRedis(bullRedis, 10_000)]);
  } catch (err) {
    logger.error('Redis is not reachable; check REDIS_URL', { err: serializeError(err) });
    await closeRedis(redis, bullRedis, subscriber);
    process.exit(1);
  }

  const services = createApiServices({
    config,
    logger,
    redis,
    bullRedis,
    subscriber,
    metrics: createMetrics(),
    encryption: Encryption.fromConfig(config.encryption),
    defaultMetrics: createDefaultMetricsRegistry(),
  });
  await services.start();
  const server = createHttpServer(createApp(services), config.http, logger, services.metrics);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const ops = await startApiOps(services, config.ops.port, config.host);
  logger.info('api listening', { host: config.host, port: config.port, metricsPort: ops.port });

  installShutdown(
    logger,
    [
      {
        name: 'http server',
        run: () =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeIdleConnections();
          }),
      },
      { name: 'ops server', run: () => ops.close() },
      { name: 'queues', run: () => services.close() },
      { name: 'redis', run: () => closeRedis(subscriber, bullRedis, redis) },
    ],
    config.shutdownTimeoutMs,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`api failed to start: ${(err as Error).message}\n`);
  process.exit(1);
});
