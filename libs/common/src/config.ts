import Joi from 'joi';
import { DEVICE_ID_PATTERN, RATE_LIMITS } from '@mgw/contracts';

/**
 * Every setting of every service, read from the environment once at start.
 * A bad value fails fast with an error that names the variable.
 * Keep the README's configuration table in step with this schema.
 */
const schema = Joi.object({
  NODE_ENV: Joi.string().valid('development', 'production', 'test').default('development'),
  LOG_LEVEL: Joi.string().valid('error', 'warn', 'info', 'debug', 'silent').default('info'),
  REDIS_URL: Joi.string()
    .uri({ scheme: ['redis', 'rediss'] })
    .default('redis://127.0.0.1:6379'),

  // API service
  PORT: Joi.number().port().default(3000),
  HOST: Joi.string().default('0.0.0.0'),
  TRUST_PROXY: Joi.alternatives()
    .try(Joi.boolean(), Joi.number().integer().min(0), Joi.string())
    .default(false),
  DEFAULT_DEVICE_ID: Joi.string().pattern(DEVICE_ID_PATTERN).default('default'),
  RATE_LIMIT_WINDOW_MS: Joi.number().integer().min(1000).default(60_000),
  RATE_LIMIT_CONNECT: Joi.number().integer().min(1).default(RATE_LIMITS.connect),
  RATE_LIMIT_DISCONNECT: Joi.number().integer().min(1).default(RATE_LIMITS.disconnect),
  RATE_LIMIT_STATUS: Joi.number().integer().min(1).default(RATE_LIMITS.status),
  RATE_LIMIT_SEND: Joi.number().integer().min(1).default(RATE_LIMITS.send),
  RATE_LIMIT_OTP: Joi.number().integer().min(1).default(RATE_LIMITS.otp),
  RATE_LIMIT_MESSAGES: Joi.number().integer().min(1).default(120),
  AUTH_FAILURE_LIMIT: Joi.number().integer().min(1).default(30),
  AUTH_FAILURE_WINDOW_MS: Joi.number()
    .integer()
    .min(1000)
    .default(15 * 60_000),
  MAX_RECIPIENTS: Joi.number().integer().min(1).max(100_000).default(1000),
  OTP_WAIT_TIMEOUT_MS: Joi.number().integer().min(100).default(20_000),
  CONNECTION_REPLY_TIMEOUT_MS: Joi.number().integer().min(100).default(30_000),
  IDEMPOTENCY_TTL_SECONDS: Joi.number()
    .integer()
    .min(60)
    .default(24 * 3600),
  MEDIA_BLOB_TTL_SECONDS: Joi.number()
    .integer()
    .min(60)
    .default(24 * 3600),
  MESSAGE_RETENTION_SECONDS: Joi.number()
    .integer()
    .min(60)
    .default(7 * 24 * 3600),

  // connection and sender services
  METRICS_PORT: Joi.number().port().default(9464),
  MESSENGER_SANDBOX_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .optional(),
  SEND_MIN_GAP_MS: Joi.number().integer().min(0).default(1000),
  SEND_GAP_JITTER_MS: Joi.number().integer().min(0).default(500),
  SEND_ATTEMPTS: Joi.number().integer().min(1).default(5),
  SEND_BACKOFF_MS: Joi.number().integer().min(10).default(2000),
  MEDIA_FETCH_TIMEOUT_MS: Joi.number().integer().min(100).default(20_000),
  LEASE_TTL_MS: Joi.number().integer().min(1000).default(15_000),
  LEASE_RENEW_MS: Joi.number().integer().min(200).default(5000),
  LEASE_SCAN_MS: Joi.number().integer().min(200).default(3000),
  QR_MAX_ATTEMPTS: Joi.number().integer().min(1).default(5),
  SHUTDOWN_TIMEOUT_MS: Joi.number().integer().min(1000).default(25_000),
}).unknown(true);

export type Config = {
  nodeEnv: 'development' | 'production' | 'test';
  logLevel: 'error' | 'warn' | 'info' | 'debug' | 'silent';
  redisUrl: string;
  port: number;
  host: string;
  trustProxy: boolean | number | string;
  defaultDeviceId: string;
  rateLimitWindowMs: number;
  rateLimits: {
    connect: number;
    disconnect: number;
    status: number;
    send: number;
    otp: number;
    messages: number;
  };
  authFailureLimit: number;
  authFailureWindowMs: number;
  maxRecipients: number;
  otpWaitTimeoutMs: number;
  connectionReplyTimeoutMs: number;
  idempotencyTtlSeconds: number;
  mediaBlobTtlSeconds: number;
  messageRetentionSeconds: number;
  metricsPort: number;
  sandboxUrl?: string;
  sendMinGapMs: number;
  sendGapJitterMs: number;
  sendAttempts: number;
  sendBackoffMs: number;
  mediaFetchTimeoutMs: number;
  leaseTtlMs: number;
  leaseRenewMs: number;
  leaseScanMs: number;
  qrMaxAttempts: number;
  shutdownTimeoutMs: number;
};

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses and validates `env`; throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const { value: e, error } = schema.validate(env, { abortEarly: false, convert: true });
  if (error) {
    const problems = error.details.map((d) => `${d.path.join('.')}: ${d.message.replace(/"/g, '')}`);
    throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  }
  return {
    nodeEnv: e.NODE_ENV,
    logLevel: e.LOG_LEVEL,
    redisUrl: e.REDIS_URL,
    port: e.PORT,
    host: e.HOST,
    trustProxy: e.TRUST_PROXY,
    defaultDeviceId: e.DEFAULT_DEVICE_ID,
    rateLimitWindowMs: e.RATE_LIMIT_WINDOW_MS,
    rateLimits: {
      connect: e.RATE_LIMIT_CONNECT,
      disconnect: e.RATE_LIMIT_DISCONNECT,
      status: e.RATE_LIMIT_STATUS,
      send: e.RATE_LIMIT_SEND,
      otp: e.RATE_LIMIT_OTP,
      messages: e.RATE_LIMIT_MESSAGES,
    },
    authFailureLimit: e.AUTH_FAILURE_LIMIT,
    authFailureWindowMs: e.AUTH_FAILURE_WINDOW_MS,
    maxRecipients: e.MAX_RECIPIENTS,
    otpWaitTimeoutMs: e.OTP_WAIT_TIMEOUT_MS,
    connectionReplyTimeoutMs: e.CONNECTION_REPLY_TIMEOUT_MS,
    idempotencyTtlSeconds: e.IDEMPOTENCY_TTL_SECONDS,
    mediaBlobTtlSeconds: e.MEDIA_BLOB_TTL_SECONDS,
    messageRetentionSeconds: e.MESSAGE_RETENTION_SECONDS,
    metricsPort: e.METRICS_PORT,
    sandboxUrl: e.MESSENGER_SANDBOX_URL,
    sendMinGapMs: e.SEND_MIN_GAP_MS,
    sendGapJitterMs: e.SEND_GAP_JITTER_MS,
    sendAttempts: e.SEND_ATTEMPTS,
    sendBackoffMs: e.SEND_BACKOFF_MS,
    mediaFetchTimeoutMs: e.MEDIA_FETCH_TIMEOUT_MS,
    leaseTtlMs: e.LEASE_TTL_MS,
    leaseRenewMs: e.LEASE_RENEW_MS,
    leaseScanMs: e.LEASE_SCAN_MS,
    qrMaxAttempts: e.QR_MAX_ATTEMPTS,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
  };
}
