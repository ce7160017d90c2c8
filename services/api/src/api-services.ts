import type { Redis } from 'ioredis';
import { type Logger, type createDefaultMetricsRegistry } from '@mgw/common';
import { type Metrics } from '@mgw/contracts';
import { MediaStore, MessageStore, SessionStore, TokenStore, type Encryption } from '@mgw/store';
import { type ApiConfig } from './config.js';
import { ConnectionServiceClient } from './connection-service-client.js';
import { Idempotency } from './idempotency.js';
import { QueueEventsPool } from './queue-events-pool.js';
import { SendQueues } from './send-queue.js';

/** Everything the express app needs; built by main.ts and by the tests in the same way. */
export interface ApiServices {
  config: ApiConfig;
  logger: Logger;
  redis: Redis;
  metrics: Metrics;
  /** Seals what the API stores that must not be readable at rest (idempotency replays). */
  encryption: Encryption;
  defaultMetrics?: ReturnType<typeof createDefaultMetricsRegistry>;
  tokens: TokenStore;
  sessions: SessionStore;
  messages: MessageStore;
  media: MediaStore;
  sendQueues: SendQueues;
  connection: ConnectionServiceClient;
  idempotency: Idempotency;
  /** Closes queues and their event listeners (not the Redis connection it was given). */
  close(): Promise<void>;
}

export function createApiServices(base: {
  config: ApiConfig;
  logger: Logger;
  redis: Redis;
  metrics: Metrics;
  encryption: Encryption;
  defaultMetrics?: ReturnType<typeof createDefaultMetricsRegistry>;
  /** How long a queue's QueueEvents stays open without waiters (default 5 minutes). */
  queueEventsIdleMs?: number;
}): ApiServices {
  const { config, logger, redis, metrics } = base;
  const messages = new MessageStore(redis, config.store.messageRetentionSeconds);
  const sessions = new SessionStore(redis);
  const events = new QueueEventsPool(config.redis.url, redis, logger, base.queueEventsIdleMs);
  const sendQueues = new SendQueues({
    redis,
    jobs: {
      attempts: config.sendAttempts,
      backoffMs: config.sendBackoffMs,
      failedRetentionSeconds: config.store.messageRetentionSeconds,
    },
    messages,
    sessions,
    events,
    metrics,
    logger,
  });
  const connection = new ConnectionServiceClient({
    redis,
    events,
    replyTimeoutMs: config.connectionReplyTimeoutMs,
    metrics,
    logger,
  });
  // A claim outlives the longest wait of a request (OTP, connect) with room to spare.
  const inProgressTtl =
    Math.ceil(Math.max(config.otpWaitTimeoutMs, config.connectionReplyTimeoutMs) / 1000) + 60;
  return {
    ...base,
    tokens: new TokenStore(redis),
    sessions,
    messages,
    media: new MediaStore(redis),
    sendQueues,
    connection,
    idempotency: new Idempotency(redis, base.encryption, config.idempotencyTtlSeconds, inProgressTtl),
    async close() {
      await Promise.all([sendQueues.close(), connection.close()]);
      await events.close();
    },
  };
}
