import Joi from 'joi';
import {
  opsConfig,
  opsEnv,
  webhookOutboundConfig,
  webhookOutboundEnv,
  redisConfig,
  redisEnv,
  runtimeConfig,
  runtimeEnv,
  validateEnv,
  type OpsConfig,
  type WebhookOutboundConfig,
  type RedisConfig,
  type RuntimeConfig,
} from '@mgw/common';
import { encryptionConfig, encryptionEnv, type EncryptionConfig } from '@mgw/store';
import { brokerConfig, brokerEnv, type BrokerConfig } from './brokers/broker-config.js';
import type { RetrySchedule } from './retry-schedule.js';

const notifierEnv: Joi.PartialSchemaMap = {
  WEBHOOK_TIMEOUT_MS: Joi.number().integer().min(100).max(60_000).default(10_000),
  WEBHOOK_MAX_ATTEMPTS: Joi.number().integer().min(1).max(100).default(18),
  WEBHOOK_RETRY_BASE_MS: Joi.number().integer().min(10).default(10_000),
  WEBHOOK_RETRY_MAX_MS: Joi.number()
    .integer()
    .min(10)
    .default(3 * 3600_000),
  WEBHOOK_DEVICE_CONCURRENCY: Joi.number().integer().min(1).max(64).default(1),
  WEBHOOK_SWEEP_MS: Joi.number().integer().min(100).default(5000),
};

export interface NotifierConfig extends RuntimeConfig {
  redis: RedisConfig;
  ops: OpsConfig;
  encryption: EncryptionConfig;
  /** Which private hosts webhook URLs may point at (none by default). */
  outbound: WebhookOutboundConfig;
  /** Budget of one attempt (connect, request, answer); a slower endpoint counts as failed. */
  timeoutMs: number;
  retry: RetrySchedule;
  /**
   * Deliveries of one device in flight at once, over all notifiers (1 keeps a device's events in
   * emission order).
   */
  deviceConcurrency: number;
  /** How often every device is looked at even without a notification (a dead notifier's devices taken over). */
  sweepMs: number;
  /** The broker transports (RabbitMQ, NATS JetStream), each on when its URL is set. */
  brokers: BrokerConfig;
}

export const NOTIFIER_ENV = [
  runtimeEnv,
  redisEnv,
  opsEnv,
  encryptionEnv,
  webhookOutboundEnv,
  notifierEnv,
  brokerEnv,
];

export function loadNotifierConfig(env: NodeJS.ProcessEnv = process.env): NotifierConfig {
  const e = validateEnv(NOTIFIER_ENV, env, [
    (v) =>
      v.WEBHOOK_RETRY_MAX_MS < v.WEBHOOK_RETRY_BASE_MS
        ? 'WEBHOOK_RETRY_MAX_MS must be at least WEBHOOK_RETRY_BASE_MS'
        : undefined,
  ]);
  return {
    ...runtimeConfig(e),
    redis: redisConfig(e),
    ops: opsConfig(e),
    encryption: encryptionConfig(e),
    outbound: webhookOutboundConfig(e),
    timeoutMs: e.WEBHOOK_TIMEOUT_MS,
    retry: {
      attempts: e.WEBHOOK_MAX_ATTEMPTS,
      baseMs: e.WEBHOOK_RETRY_BASE_MS,
      maxMs: e.WEBHOOK_RETRY_MAX_MS,
    },
    deviceConcurrency: e.WEBHOOK_DEVICE_CONCURRENCY,
    sweepMs: e.WEBHOOK_SWEEP_MS,
    brokers: brokerConfig(e),
  };
}
