import Joi from 'joi';
import {
  opsConfig,
  opsEnv,
  redisConfig,
  redisEnv,
  runtimeConfig,
  sandboxEnv,
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
  parseProxyUrl,
  ProxyUrlError,
  type ProxyUrl,
  storeConfig,
  storeEnv,
  type EncryptionConfig,
  type StoreConfig,
} from '@mgw/store';

/** Settings of every process that opens WhatsApp sockets (connection and sender services). */
export const messengerEnv: Joi.PartialSchemaMap = {
  ...sandboxEnv,
  LEASE_TTL_MS: Joi.number().integer().min(1000).default(15_000),
  LEASE_RENEW_MS: Joi.number().integer().min(200).default(5000),
  AUTH_CACHE_MAX_MB: Joi.number().min(0.01).default(64),
  // The message names the variable, never its value (it may carry the proxy's password).
  DEVICE_PROXY_URL: Joi.string()
    .allow('')
    .default('')
    .custom((value: string, helpers) => {
      if (value === '') return value;
      try {
        parseProxyUrl(value);
        return value;
      } catch (err) {
        if (err instanceof ProxyUrlError)
          return helpers.message({ custom: `"DEVICE_PROXY_URL" ${err.message}` });
        throw err;
      }
    }),
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
  /** The proxy of every device that has none of its own (DEVICE_PROXY_URL); none when unset. */
  defaultProxy?: ProxyUrl;
}

export function messengerConfig(e: Env): MessengerConfig {
  return {
    sandboxUrl: e.MESSENGER_SANDBOX_URL,
    lease: { ttlMs: e.LEASE_TTL_MS, renewMs: e.LEASE_RENEW_MS },
    authCacheMaxBytes: Math.round(e.AUTH_CACHE_MAX_MB * 1024 * 1024),
    ...(e.DEVICE_PROXY_URL ? { defaultProxy: parseProxyUrl(e.DEVICE_PROXY_URL as string) } : {}),
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
