import {
  createServiceRuntime,
  isEntryPoint,
  runService,
  SANDBOX_WEBHOOK_WARNING,
  type ServiceHost,
  tracingWanted,
} from '@mgw/common';
import { createMetrics, type Metrics } from '@mgw/contracts';
import { Encryption } from '@mgw/store';
import { createApiServices } from './api-services.js';
import { createApp } from './app.js';
import { loadApiConfig } from './config.js';
import { createHttpServer } from './http/server.js';
import { opsOptions } from './features/ops/mount.js';

/**
 * Starts the API: as its own process (this file run by node), or, given a host, as one part
 * of the all-in-one process (which imports it).
 */
export async function startApi(host?: ServiceHost<Metrics>): Promise<void> {
  const config = loadApiConfig();
  const rt = createServiceRuntime({
    service: 'api',
    config,
    metrics: host?.metrics ?? createMetrics({ exemplars: tracingWanted() }),
    // Concurrent requests' commands share writes (auto-pipelining): fewer syscalls per request.
    redis: { role: 'producer', options: { enableAutoPipelining: true } },
    host,
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
  const ops = await rt.serveOps(opsOptions(services), config.host);
  logger.info('api listening', { host: config.host, port: config.port, metricsPort: ops.port });
  if (config.outbound.sandboxLoopback) logger.warn(SANDBOX_WEBHOOK_WARNING);

  rt.installShutdown([
    {
      name: 'http server',
      run: () =>
        new Promise<void>((resolve) => {
          // Open event streams would hold the server open: they end first (clients resume elsewhere).
          void services.eventStreams.close();
          server.close(() => resolve());
          server.closeIdleConnections();
        }),
    },
    { name: 'ops server', run: () => ops.close() },
    { name: 'queues', run: () => services.close() },
  ]);
}

if (isEntryPoint(import.meta.url)) runService('api', () => startApi());
