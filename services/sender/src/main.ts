import {
  MessageStore,
  SessionStore,
  closeRedis,
  createDefaultMetricsRegistry,
  createLogger,
  createMetrics,
  createRedis,
  installShutdown,
  loadConfig,
  serializeError,
  startOpsServer,
  waitForRedis,
} from '@mgw/common';
import { LeaseManager, enableSandbox, processOwnerId } from '@mgw/messenger';
import { DeviceOwner } from './device-owner.js';
import { startQueueMetrics } from './queue-metrics.js';

const config = loadConfig();
const logger = createLogger({ level: config.logLevel, service: 'sender' });

async function main(): Promise<void> {
  const redis = createRedis(config.redisUrl, 'worker', 'sender');
  const bullConnection = createRedis(config.redisUrl, 'worker', 'sender-bull');
  const subscriber = createRedis(config.redisUrl, 'subscriber', 'sender-sub');
  await waitForRedis(redis);
  const metrics = createMetrics();
  const sandbox = config.sandboxUrl ? await enableSandbox(config.sandboxUrl, logger) : undefined;
  // Fail-fast connection for leases: a Redis outage must surface as an "unknown" renewal (keep
  // the socket, retry) instead of commands queueing silently while the lease runs out.
  const leaseRedis = createRedis(config.redisUrl, 'producer', 'sender-lease');
  await waitForRedis(leaseRedis);
  const leases = new LeaseManager(leaseRedis, processOwnerId('sender'), config.leaseTtlMs);
  const owner = new DeviceOwner(
    leases,
    {
      config,
      logger,
      metrics,
      redis,
      bullConnection,
      messages: new MessageStore(redis, config.messageRetentionSeconds),
      sessions: new SessionStore(redis),
      sandbox,
    },
    subscriber,
    logger,
  );
  const ops = await startOpsServer({
    port: config.metricsPort,
    metrics,
    defaults: createDefaultMetricsRegistry(),
    ready: async () => {
      const ok = (await redis.ping().catch(() => '')) === 'PONG';
      metrics.redisUp.set(ok ? 1 : 0);
      return ok;
    },
  });
  await owner.start();
  const stopQueueMetrics = startQueueMetrics(owner, metrics);
  installShutdown(
    logger,
    [
      { name: 'hand devices over', run: () => owner.stop() },
      { name: 'queue metrics', run: stopQueueMetrics },
      { name: 'ops server', run: () => ops.close() },
      { name: 'redis', run: () => closeRedis(subscriber, bullConnection, leaseRedis, redis) },
    ],
    config.shutdownTimeoutMs,
  );
  logger.info('sender started', { owner: leases.owner, metricsPort: ops.port });
}

main().catch((err: unknown) => {
  logger.error('sender failed to start', { err: serializeError(err) });
  process.exit(1);
});
