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
import { startConnectionWorker } from './connection-worker.js';
import { PairingManager } from './pairing-manager.js';

const config = loadConfig();
const logger = createLogger({ level: config.logLevel, service: 'connection' });

async function main(): Promise<void> {
  const redis = createRedis(config.redisUrl, 'worker', 'connection');
  const blocking = createRedis(config.redisUrl, 'worker', 'connection-blocking');
  const bullConnection = createRedis(config.redisUrl, 'worker', 'connection-bull');
  await waitForRedis(redis);
  const metrics = createMetrics();
  const sandbox = config.sandboxUrl ? await enableSandbox(config.sandboxUrl, logger) : undefined;
  // Fail-fast connection for leases: a Redis outage must surface as an "unknown" renewal (keep
  // the socket, retry) instead of commands queueing silently while the lease runs out.
  const leaseRedis = createRedis(config.redisUrl, 'producer', 'connection-lease');
  await waitForRedis(leaseRedis);
  const leases = new LeaseManager(leaseRedis, processOwnerId('connection'), config.leaseTtlMs);
  const sessions = new SessionStore(redis);
  const pairing = new PairingManager({ config, logger, redis, leases, sessions, sandbox });
  const worker = startConnectionWorker({
    config,
    logger,
    metrics,
    redis,
    blocking,
    bullConnection,
    leases,
    sessions,
    messages: new MessageStore(redis, config.messageRetentionSeconds),
    sandbox,
    pairing,
  });
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
  installShutdown(
    logger,
    [
      { name: 'connection worker', run: () => worker.close() },
      { name: 'pairing sockets', run: () => pairing.stopAll() },
      { name: 'ops server', run: () => ops.close() },
      { name: 'redis', run: () => closeRedis(bullConnection, blocking, leaseRedis, redis) },
    ],
    config.shutdownTimeoutMs,
  );
  logger.info('connection service started', { owner: leases.owner, metricsPort: ops.port });
}

main().catch((err: unknown) => {
  logger.error('connection service failed to start', { err: serializeError(err) });
  process.exit(1);
});
