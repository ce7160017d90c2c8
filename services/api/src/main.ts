import { createServiceRuntime, runService } from '@mgw/common';
import { createMetrics } from '@mgw/contracts';
import { Encryption } from '@mgw/store';
import { createApiServices } from './api-services.js';
import { createApp } from './app.js';
import { loadApiConfig } from './config.js';
import { createHttpServer } from './http/server.js';
import { startApiOps } from './routes/ops.js';

async function main(): Promise<void> {
  const config = loadApiConfig();
  const rt = createServiceRuntime({
    service: 'api',
    config,
    metrics: createMetrics(),
    // Concurrent requests' commands share writes (auto-pipelining): fewer syscalls per request.
    redis: { role: 'producer', options: { enableAutoPipelining: true } },
  });
  const { logger, redis } = rt;
  const bullRedis = rt.connect('producer', 'bull');
  const subscriber = rt.connect('subscriber', 'sub');
  await rt.waitForRedis(bullRedis);

  const services = createApiServices({
    config,
    logger,
    redis,
    bullRedis,
    subscriber,
    metrics: rt.metrics,
    encryption: Encryption.fromConfig(config.encryption),
    defaultMetrics: rt.defaultMetrics,
  });
  await services.start();
  const server = createHttpServer(createApp(services), config.http, logger, services.metrics);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const ops = await startApiOps(services, config.ops.port, config.host);
  logger.info('api listening', { host: config.host, port: config.port, metricsPort: ops.port });

  rt.installShutdown([
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
  ]);
}

runService('api', main);
