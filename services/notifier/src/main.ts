import os from 'node:os';
import {
  closeRedis,
  createDefaultMetricsRegistry,
  createLogger,
  createOutboundClient,
  createRedis,
  installShutdown,
  redisAcceptsWrites,
  serializeError,
  startOpsServer,
  waitForRedis,
} from '@mgw/common';
import { ERRORS, createMetrics, keys } from '@mgw/contracts';
import { Encryption, WebhookStore } from '@mgw/store';
import { collectBacklog } from './backlog.js';
import { loadNotifierConfig } from './config.js';
import { DeviceWorkers } from './device-workers.js';
import { OutboxReader } from './outbox-reader.js';
import { TargetCache } from './target-cache.js';

/** Webhook answers are read only to learn their status: a little is plenty. */
const MAX_ANSWER_BYTES = 64 * 1024;

async function main(): Promise<void> {
  const config = loadNotifierConfig();
  const logger = createLogger({ level: config.logLevel, service: 'notifier' });
  const redis = createRedis(config.redis, 'worker', 'notifier');
  const probe = createRedis(config.redis, 'producer', 'notifier-probe');
  const bullConnection = createRedis(config.redis, 'worker', 'notifier-bull');
  const subscriber = createRedis(config.redis, 'subscriber', 'notifier-sub');
  await Promise.all([waitForRedis(redis), waitForRedis(probe)]);
  const metrics = createMetrics();
  const consumer = `notifier-${os.hostname()}-${process.pid}`;
  const encryption = Encryption.fromConfig(config.encryption);
  // The previous secret of a rotation signs until its own deadline, stored with it.
  const webhooks = new WebhookStore(redis, encryption, 0);
  const targets = new TargetCache(webhooks);
  const workers = new DeviceWorkers({
    connection: bullConnection,
    concurrency: config.deviceConcurrency,
    retry: config.retry,
    delivery: {
      webhooks,
      targets,
      sealer: encryption,
      outbound: createOutboundClient({
        allowList: config.outbound.allowList,
        timeoutMs: config.timeoutMs,
        maxBytes: MAX_ANSWER_BYTES,
        // A redirect is a failed delivery (Standard Webhooks): the endpoint must answer itself.
        maxRedirects: 0,
      }),
      timeoutMs: config.timeoutMs,
      metrics,
      logger,
    },
    logger,
  });
  const outbox = new OutboxReader(redis, workers, consumer, config.deliveredRetentionSeconds, logger);

  // Every device with a webhook: a worker for its queue, and its outbox read (stale reads reclaimed).
  const sweep = async () => {
    const devices = new Set(await webhooks.devices());
    await workers.retain(devices);
    for (const deviceId of devices) {
      workers.queue(deviceId);
      await outbox.drain(deviceId, true);
    }
  };
  let sweeping: Promise<void> = Promise.resolve();
  const runSweep = () => {
    sweeping = sweep().catch((err: unknown) => {
      logger.warn('sweep failed', { err: serializeError(err) });
    });
  };
  await subscriber.subscribe(keys.eventsChannel(), keys.webhooksChannel());
  subscriber.on('message', (channel: string, deviceId: string) => {
    // A webhook set, rotated, disabled or removed: its next delivery reads it again.
    if (channel === keys.webhooksChannel()) targets.forget(deviceId);
    void outbox.drain(deviceId);
  });
  runSweep();
  const timer = setInterval(runSweep, config.sweepMs);

  const ops = await startOpsServer({
    port: config.ops.port,
    registry: metrics.registry,
    defaults: createDefaultMetricsRegistry(),
    notReadyError: ERRORS.serviceUnavailable,
    ready: async () => {
      const ok = await redisAcceptsWrites(probe, keys.readyProbe(consumer));
      metrics.redisUp.set(ok ? 1 : 0);
      return ok;
    },
    collect: () => collectBacklog(redis, workers, metrics),
  });
  installShutdown(
    logger,
    [
      {
        name: 'outbox',
        run: async () => {
          clearInterval(timer);
          await subscriber.unsubscribe().catch(() => undefined);
          await sweeping;
        },
      },
      // Active attempts finish; jobs left are picked up by any notifier, now or after a restart.
      { name: 'workers', run: () => workers.closeAll() },
      { name: 'ops server', run: () => ops.close() },
      { name: 'redis', run: () => closeRedis(subscriber, bullConnection, probe, redis) },
    ],
    config.shutdownTimeoutMs,
  );
  logger.info('notifier started', { consumer, metricsPort: ops.port });
}

main().catch((err: unknown) => {
  process.stderr.write(`notifier failed to start: ${JSON.stringify(serializeError(err))}\n`);
  process.exit(1);
});
