import Joi from 'joi';
import {
  opsConfig,
  opsEnv,
  redisConfig,
  redisEnv,
  runtimeConfig,
  runtimeEnv,
  type ConfigRule,
  type Env,
  type OpsConfig,
  type RedisConfig,
  type RuntimeConfig,
} from '@mgw/common';
import {
  encryptionConfig,
  encryptionEnv,
  storeConfig,
  storeEnv,
  type EncryptionConfig,
  type StoreConfig,
} from '@mgw/store';

/** Settings of every process that opens WhatsApp sockets (connection and sender services). */
export const messengerEnv: Joi.PartialSchemaMap = {
  MESSENGER_SANDBOX_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .optional(),
  LEASE_TTL_MS: Joi.number().integer().min(1000).default(15_000),
  LEASE_RENEW_MS: Joi.number().integer().min(200).default(5000),
  AUTH_CACHE_MAX_MB: Joi.number().min(0.01).default(64),
};

/** A renewal must fit twice in the TTL, or one slow round lets the lease lapse. */
export const messengerRules: ConfigRule[] = [
  (e) =>
    e.LEASE_RENEW_MS * 2 > e.LEASE_TTL_MS
      ? `LEASE_RENEW_MS (${e.LEASE_RENEW_MS}) must be at most half of LEASE_TTL_MS (${e.LEASE_TTL_MS})`
      : undefined,
];

export interface LeaseConfig {
  ttlMs: number;
  renewMs: number;
}

export interface MessengerConfig {
  /** Control API of a simulator; when set, sockets talk to it instead of WhatsApp. */
  sandboxUrl?: string;
  lease: LeaseConfig;
  /** Bound of the process's auth-state (Signal key) cache, in bytes; least recently used out first. */
  authCacheMaxBytes: number;
}

export function messengerConfig(e: Env): MessengerConfig {
  return {
    sandboxUrl: e.MESSENGER_SANDBOX_URL,
    lease: { ttlMs: e.LEASE_TTL_MS, renewMs: e.LEASE_RENEW_MS },
    authCacheMaxBytes: Math.round(e.AUTH_CACHE_MAX_MB * 1024 * 1024),
  };
}

/** What every process that opens WhatsApp sockets reads (the connection and sender services add theirs). */
export const MESSENGER_SERVICE_ENV = [runtimeEnv, redisEnv, opsEnv, storeEnv, encryptionEnv, messengerEnv];

export interface MessengerServiceConfig extends RuntimeConfig {
  redis: RedisConfig;
  ops: OpsConfig;
  store: StoreConfig;
  encryption: EncryptionConfig;
  messenger: MessengerConfig;
}

export function messengerServiceConfig(e: Env): MessengerServiceConfig {
  return {
    ...runtimeConfig(e),
    redis: redisConfig(e),
    ops: opsConfig(e),
    store: storeConfig(e),
    encryption: encryptionConfig(e),
    messenger: messengerConfig(e),
  };
}
