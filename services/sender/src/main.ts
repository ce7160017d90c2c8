import { closeRedis, createRedis, installShutdown, serializeError } from '@mgw/common';
import { startMessengerRuntime } from '@mgw/messenger';
import { ContentStore } from '@mgw/store';
import { loadSenderConfig } from './config.js';
import { DeviceFleet } from './device-fleet.js';
import { createAttachmentFetcher } from './media-source.js';
import { startQueueMetrics } from './queue-metrics.js';

async function main(): Promise<void> {
  const config = loadSenderConfig();
  const rt = await startMessengerRuntime('sender', config);
  const { logger, metrics, redis, leases, sessions, messages, encryption, sandbox } = rt;
  const bullConnection = createRedis(config.redis.url, 'worker', 'sender-bull');
  const subscriber = createRedis(config.redis.url, 'subscriber', 'sender-sub');
  const contents = new ContentStore(redis, encryption, config.store.messageRetentionSeconds);
  const fetchAttachment = createAttachmentFetcher({
    outbound: config.outbound,
    timeoutMs: config.mediaFetchTimeoutMs,
  });
  const fleet = new DeviceFleet(
    leases,
    {
      config,
      logger,
      metrics,
      redis,
      bullConnection,
      messages,
      contents,
      sessions,
      encryption,
      fetchAttachment,
      sandbox,
    },
    subscriber,
    logger,
  );
  const ops = await rt.startOps();
  await fleet.start();
  const stopQueueMetrics = startQueueMetrics(fleet, metrics);
  installShutdown(
    logger,
    [
      { name: 'hand devices over', run: () => fleet.stop() },
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
