import os from 'node:os';
import {
  createOutboundClient,
  createServiceRuntime,
  isEntryPoint,
  runService,
  SANDBOX_WEBHOOK_WARNING,
  type ServiceHost,
  tracingWanted,
} from '@mgw/common';
import { ERRORS, createMetrics, keys, type Metrics } from '@mgw/contracts';
import { Encryption, WebhookDeliveries, WebhookReport, WebhookStore } from '@mgw/store';
import { collectBacklog } from './backlog.js';
import { startBrokerRelays } from './brokers/broker-relays.js';
import { loadNotifierConfig } from './config.js';
import { DeliveryDispatcher } from './dispatcher.js';
import { legacyQueueAdopter } from './legacy-queues.js';
import { OutboxWatcher } from './outbox-watcher.js';
import { TargetCache } from './target-cache.js';

/** Webhook answers are read only to learn their status: a little is plenty. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * Starts the notifier: as its own process (this file run by node), or, given a host, as one part
 * of the all-in-one process (which imports it).
 */
export async function startNotifier(host?: ServiceHost<Metrics>): Promise<void> {
  const config = loadNotifierConfig();
  const rt = createServiceRuntime({
    service: 'notifier',
    config,
    metrics: host?.metrics ?? createMetrics({ exemplars: tracingWanted() }),
    redis: 'worker',
    host,
  });
  const { logger, metrics, redis } = rt;
  // The readiness probe's connection fails fast: a worker one would queue the probe through an outage.
  const probe = rt.connect('producer', 'probe');
  const subscriber = rt.connect('subscriber', 'sub');
  await rt.waitForRedis(probe);
  const consumer = `notifier-${os.hostname()}-${process.pid}`;
  const encryption = Encryption.fromConfig(config.encryption);
  // The previous secret of a rotation signs until its own deadline, stored with it.
  const webhooks = new WebhookStore(redis, encryption, 0);
  const targets = new TargetCache(webhooks);
  // Three connections whatever the number of devices: this one, the probe's and the subscriber.
  const store = new WebhookDeliveries(redis);
  const adoptLegacy = legacyQueueAdopter(redis, store, config.timeoutMs + 5_000, logger);
  const dispatcher = new DeliveryDispatcher({
    store,
    owner: consumer,
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
      maxAttempts: config.retry.attempts,
      metrics,
      logger,
    },
    logger,
    adoptLegacy,
    report: new WebhookReport(redis),
  });
  const watcher = new OutboxWatcher({
    webhooks,
    targets,
    dispatcher,
    sweepMs: config.sweepMs,
    logger,
    subscribedGauge: metrics.redisSubscribed,
  });

  // The broker transports (RabbitMQ, NATS JetStream) configured: not part of readiness (a broker
  // down makes its events wait in the log; webhooks flow on).
  const brokers = await startBrokerRelays({
    config: config.brokers,
    redis,
    subscriber: () => rt.connect('subscriber', 'brokers-sub'),
    sealer: encryption,
    owner: consumer,
    metrics,
    logger,
  });
  // Ready only while subscribed: without it events wait for the sweep (WEBHOOK_SWEEP_MS), not ~40 ms.
  const ops = await rt.startOps({
    probe,
    probeKey: keys.readyProbe(consumer),
    notReadyError: ERRORS.serviceUnavailable,
    serving: () => watcher.subscribed,
    notServingReason: () => watcher.problem,
    collect: async () => {
      brokers?.collect();
      await collectBacklog(webhooks, store, dispatcher, metrics);
    },
  });
  rt.installShutdown([
    { name: 'outbox', run: () => watcher.stop() },
    { name: 'brokers', run: async () => brokers?.stop() },
    // Attempts under way finish; the leases go back, so other notifiers take the devices at once.
    { name: 'deliveries', run: () => dispatcher.stop() },
    { name: 'ops server', run: () => ops.close() },
  ]);
  // Until Redis confirms the subscription, /readyz answers 503 with the reason.
  await watcher.start(subscriber);
  logger.info('notifier started', { consumer, metricsPort: ops.port });
  if (config.outbound.sandboxLoopback) logger.warn(SANDBOX_WEBHOOK_WARNING);
}

if (isEntryPoint(import.meta.url)) runService('notifier', () => startNotifier());
