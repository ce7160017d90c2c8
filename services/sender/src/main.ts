import { closeRedis, createRedis, installShutdown, serializeError } from '@mgw/common';
import { startMessengerRuntime } from '@mgw/messenger';
import { DeviceOwner } from './device-owner.js';
import { startQueueMetrics } from './queue-metrics.js';

async function main(): Promise<void> {
  const rt = await startMessengerRuntime('sender');
  const { config, logger, metrics, redis, leases, sessions, messages, sandbox } = rt;
  const bullConnection = createRedis(config.redisUrl, 'worker', 'sender-bull');
  const subscriber = createRedis(config.redisUrl, 'subscriber', 'sender-sub');
  const owner = new DeviceOwner(
    leases,
    { config, logger, metrics, redis, bullConnection, messages, sessions, sandbox },
    subscriber,
    logger,
  );
  const ops = await rt.startOps();
  await owner.start();
  const stopQueueMetrics = startQueueMetrics(owner, metrics);
  installShutdown(
    logger,
    [
      { name: 'hand devices over', run: () => owner.stop() },
      { name: 'queue metrics', run: stopQueueMetrics },
      { name: 'ops server', run: () => ops.close() },
      { name: 'redis', run: () => closeRedis(subscriber, bullConnection, rt.leaseRedis, redis) },
    ],
    config.shutdownTimeoutMs,
  );
  logger.info('sender started', { owner: leases.owner, metricsPort: ops.port });
}

main().catch((err: unknown) => {
  process.stderr.write(`sender failed to start: ${JSON.stringify(serializeError(err))}\n`);
  process.exit(1);
});
