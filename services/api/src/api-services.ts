import type { Redis } from 'ioredis';
import type { Logger, createDefaultMetricsRegistry } from '@mgw/common';
import type { Metrics } from '@mgw/contracts';
import { ContentStore, MessageStore, SessionStore, TokenStore, type Encryption } from '@mgw/store';
import type { ApiConfig } from './config.js';
import { ConnectionServiceClient } from './connection-service-client.js';
import { Idempotency } from './idempotency.js';
import { QueueEventsPool } from './queue-events-pool.js';
import { SendQueues } from './send-queue.js';
import { TokenCache } from './token-cache.js';

/** Everything the express app needs; built by main.ts and by the tests in the same way. */
export interface ApiServices {
  config: ApiConfig;
  logger: Logger;
  /** The API's own commands. */
  redis: Redis;
  /** BullMQ's producer connection (kept apart: ioredis copies BullMQ's scripts into every batch on it). */
  bullRedis: Redis;
  metrics: Metrics;
  /** Seals what the API stores that must not be readable at rest (idempotency replays). */
  encryption: Encryption;
  defaultMetrics?: ReturnType<typeof createDefaultMetricsRegistry>;
  tokens: TokenStore;
  /** Verified tokens, kept briefly and dropped at once when revoked. */
  tokenCache: TokenCache;
  sessions: SessionStore;
  messages: MessageStore;
  sendQueues: SendQueues;
  connection: ConnectionServiceClient;
  idempotency: Idempotency;
  /** Subscribes to what the API must hear at once (token revocations). */
  start(): Promise<void>;
  /** Closes queues and their event listeners (not the Redis connections it was given). */
  close(): Promise<void>;
}

export function createApiServices(base: {
  config: ApiConfig;
  logger: Logger;
  redis: Redis;
  bullRedis: Redis;
  /** Pub/sub connection (token revocations). */
  subscriber: Redis;
  metrics: Metrics;
  /** Seals what the API stores that must not be readable at rest (contents, idempotency replays). */
  encryption: Encryption;
  defaultMetrics?: ReturnType<typeof createDefaultMetricsRegistry>;
  /** How long a queue's QueueEvents stays open without waiters (default 5 minutes). */
  queueEventsIdleMs?: number;
}): ApiServices {
  const { config, logger, redis, bullRedis, metrics } = base;
  const retention = config.store.messageRetentionSeconds;
  const messages = new MessageStore(redis, retention);
  const events = new QueueEventsPool(config.redis.url, redis, logger, base.queueEventsIdleMs);
  const sendQueues = new SendQueues({
    redis,
    bullRedis,
    jobs: {
      attempts: config.sendAttempts,
      backoffMs: config.sendBackoffMs,
      failedRetentionSeconds: retention,
    },
    quota: config.deviceQuota,
    listChunk: config.acceptChunkRecipients,
    messages,
    contents: new ContentStore(redis, base.encryption, retention),
    events,
    metrics,
    logger,
  });
  const connection = new ConnectionServiceClient({
    redis: bullRedis,
    events,
    replyTimeoutMs: config.connectionReplyTimeoutMs,
    metrics,
    logger,
  });
  const tokens = new TokenStore(redis);
  const tokenCache = new TokenCache(tokens, base.subscriber, logger);
  // A claim outlives the longest wait of a request (OTP, connect) with room to spare.
  const inProgressTtl =
    Math.ceil(Math.max(config.otpWaitTimeoutMs, config.connectionReplyTimeoutMs) / 1000) + 60;
  return {
    config,
    logger,
    redis,
    bullRedis,
    metrics,
    encryption: base.encryption,
    defaultMetrics: base.defaultMetrics,
    tokens,
    tokenCache,
    sessions: new SessionStore(redis),
    messages,
    sendQueues,
    connection,
    idempotency: new Idempotency(redis, base.encryption, config.idempotencyTtlSeconds, inProgressTtl),
    start: () => tokenCache.start(),
    async close() {
      await Promise.all([sendQueues.close(), connection.close()]);
      await events.close();
    },
  };
}
