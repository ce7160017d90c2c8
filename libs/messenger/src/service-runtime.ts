import {
  createDefaultMetricsRegistry,
  createLogger,
  createRedis,
  redisAcceptsWrites,
  startOpsServer,
  waitForRedis,
  type Logger,
  type OpsServer,
  type RedisClient,
} from '@mgw/common';
import { ERRORS, createMetrics, keys, type Metrics } from '@mgw/contracts';
import { Encryption, MessageStore, SessionStore } from '@mgw/store';
import type { MessengerServiceConfig } from './config.js';
import { configureAuthCache } from './auth-cache.js';
import { LeaseManager, processOwnerId } from './lease.js';
import { routeLibsignalConsole } from './libsignal-console.js';
import { enableSandbox, type SandboxSocketOptions } from './sandbox.js';

/** What the connection and sender services both start with: the pieces around a Baileys socket. */
export interface MessengerRuntime {
  logger: Logger;
  metrics: Metrics;
  /** General-purpose connection (worker role: waits out short Redis outages). */
  redis: RedisClient;
  /** Fail-fast connection for leases, so an outage reads as an "unknown" renewal at once. */
  leaseRedis: RedisClient;
  leases: LeaseManager;
  sessions: SessionStore;
  messages: MessageStore;
  /** Built once from MGW_ENCRYPTION_KEY (and old keys): seals what the sockets store. */
  encryption: Encryption;
  sandbox?: SandboxSocketOptions;
  /** Starts /metrics, /healthz and /readyz (Redis reachable and accepting writes) on the ops port. */
  startOps(): Promise<OpsServer>;
}

export async function startMessengerRuntime(
  service: 'connection' | 'sender',
  config: MessengerServiceConfig,
): Promise<MessengerRuntime> {
  const logger = createLogger({ level: config.logLevel, service });
  routeLibsignalConsole(logger);
  const encryption = Encryption.fromConfig(config.encryption);
  const redis = createRedis(config.redis, 'worker', service);
  await waitForRedis(redis);
  const leaseRedis = createRedis(config.redis, 'producer', `${service}-lease`);
  await waitForRedis(leaseRedis);
  const metrics = createMetrics();
  configureAuthCache({
    maxBytes: config.messenger.authCacheMaxBytes,
    stats: {
      hits: (n) => metrics.authCache.inc({ result: 'hit' }, n),
      misses: (n) => metrics.authCache.inc({ result: 'miss' }, n),
      evicted: () => metrics.authCache.inc({ result: 'eviction' }),
      size: (bytes) => metrics.authCacheBytes.set(bytes),
    },
  });
  const owner = processOwnerId(service);
  const sandbox = config.messenger.sandboxUrl
    ? await enableSandbox(config.messenger.sandboxUrl, logger)
    : undefined;
  return {
    logger,
    metrics,
    redis,
    leaseRedis,
    leases: new LeaseManager(leaseRedis, owner, config.messenger.lease.ttlMs),
    sessions: new SessionStore(redis),
    messages: new MessageStore(redis, config.store.messageRetentionSeconds),
    encryption,
    sandbox,
    startOps: () =>
      startOpsServer({
        port: config.ops.port,
        registry: metrics.registry,
        defaults: createDefaultMetricsRegistry(),
        notReadyError: ERRORS.serviceUnavailable,
        ready: async () => {
          // The fail-fast connection: the worker one would queue the probe through an outage.
          const ok = await redisAcceptsWrites(leaseRedis, keys.readyProbe(owner));
          metrics.redisUp.set(ok ? 1 : 0);
          return ok;
        },
      }),
  };
}
