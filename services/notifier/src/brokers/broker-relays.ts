import type { Logger, RedisClient } from '@mgw/common';
import type { Metrics } from '@mgw/contracts';
import { BrokerRelayState, BrokerSettingsStore, WebhookReport, type Sealer } from '@mgw/store';
import type { BrokerConfig } from './broker-config.js';
import { BrokerWatcher } from './broker-watcher.js';
import { NatsTransport } from './nats.js';
import { RabbitMqTransport } from './rabbitmq.js';
import { BrokerRelay } from './relay.js';
import { SqsTransport } from './sqs.js';
import type { BrokerTransport } from './transport.js';

/** How long a (transport, device) lease lasts without an advance (a dead notifier's devices wait this long). */
export const BROKER_LEASE_TTL_MS = 30_000;
/** A publish not confirmed within this is taken as failed (below the lease's TTL). */
export const BROKER_PUBLISH_TIMEOUT_MS = 10_000;
/** Devices one notifier publishes at once, per transport. */
const DEVICE_CONCURRENCY = 16;

export interface BrokerRelays {
  relays: BrokerRelay[];
  /** Sets the broker gauges (each scrape). */
  collect(): void;
  stop(): Promise<void>;
}

/**
 * The configured transports, a relay each, and the watcher that wakes them; undefined when no
 * transport is configured (nothing is connected, no subscription taken).
 */
export async function startBrokerRelays(o: {
  config: BrokerConfig;
  redis: RedisClient;
  /** A subscriber connection of its own (made only when a transport is configured). */
  subscriber: () => RedisClient;
  sealer: Sealer;
  owner: string;
  metrics: Metrics;
  logger: Logger;
  /** Fixed SQS credentials (tests, bench); absent: the AWS SDK's chain (env, the pod's role). */
  sqsCredentials?: { accessKeyId: string; secretAccessKey: string };
}): Promise<BrokerRelays | undefined> {
  const { config, metrics, logger } = o;
  const transports: BrokerTransport[] = [];
  const onState = (name: string) => (up: boolean) =>
    metrics.brokerConnected.set({ transport: name }, up ? 1 : 0);
  if (config.rabbitmq)
    transports.push(
      new RabbitMqTransport({
        ...config.rabbitmq,
        reconnectMaxMs: config.retryMs,
        logger,
        onState: onState('rabbitmq'),
      }),
    );
  if (config.nats)
    transports.push(
      new NatsTransport({
        ...config.nats,
        reconnectMaxMs: config.retryMs,
        ackTimeoutMs: BROKER_PUBLISH_TIMEOUT_MS,
        logger,
        onState: onState('nats'),
      }),
    );
  if (config.sqs)
    transports.push(
      new SqsTransport({
        ...config.sqs,
        ...(o.sqsCredentials ? { credentials: o.sqsCredentials } : {}),
        reconnectMaxMs: config.retryMs,
        // Two tries of a call fit in the relay's publish timeout.
        requestTimeoutMs: BROKER_PUBLISH_TIMEOUT_MS / 2 - 500,
        logger,
        onState: onState('sqs'),
      }),
    );
  if (!transports.length) return undefined;
  const settings = new BrokerSettingsStore(o.redis);
  const report = new WebhookReport(o.redis);
  const relays = transports.map(
    (transport) =>
      new BrokerRelay({
        transport,
        state: new BrokerRelayState(o.redis, o.sealer, transport.name, BROKER_LEASE_TTL_MS),
        settings,
        owner: o.owner,
        batch: config.batch,
        concurrency: DEVICE_CONCURRENCY,
        retryMs: config.retryMs,
        publishTimeoutMs: BROKER_PUBLISH_TIMEOUT_MS,
        metrics,
        logger,
        report,
      }),
  );
  for (const r of relays) await r.start();
  const watcher = new BrokerWatcher({
    relays,
    redis: o.redis,
    sweepMs: config.sweepMs,
    logger,
    subscribedGauge: metrics.redisSubscribed,
  });
  await watcher.start(o.subscriber());
  logger.info('broker relays started', { transports: relays.map((r) => r.name) });
  return {
    relays,
    collect: () => relays.forEach((r) => r.collect()),
    stop: async () => {
      await watcher.stop();
      await Promise.all(relays.map((r) => r.stop()));
    },
  };
}
