import type { Redis } from 'ioredis';
import {
  MessageStore,
  SessionStore,
  createDefaultMetricsRegistry,
  createLogger,
  createMetrics,
  createRedis,
  loadConfig,
  pingRedis,
  startOpsServer,
  waitForRedis,
  type Config,
  type Logger,
  type Metrics,
} from '@mgw/common';
import { LeaseManager, processOwnerId } from './lease.js';
import { routeLibsignalConsole } from './libsignal-console.js';
import { enableSandbox, type SandboxSocketOptions } from './sandbox.js';

/** What the connection and sender services both start with: the pieces around a Baileys socket. */
export interface MessengerRuntime {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  /** General-purpose connection (worker role: waits out short Redis outages). */
  redis: Redis;
  /** Fail-fast connection for leases, so an outage reads as an "unknown" renewal at once. */
  leaseRedis: Redis;
  leases: LeaseManager;
  sessions: SessionStore;
  messages: MessageStore;
  sandbox?: SandboxSocketOptions;
  /** Starts /metrics, /healthz and /readyz (Redis reachable) on METRICS_PORT. */
  startOps(): Promise<{ port: number; close(): Promise<void> }>;
}

export async function startMessengerRuntime(service: 'connection' | 'sender'): Promise<MessengerRuntime> {
  const config = loadConfig();
  const logger = createLogger({ level: config.logLevel, service });
  routeLibsignalConsole(logger);
  const redis = createRedis(config.redisUrl, 'worker', service);
  await waitForRedis(redis);
  const leaseRedis = createRedis(config.redisUrl, 'producer', `${service}-lease`);
  await waitForRedis(leaseRedis);
  const metrics = createMetrics();
  const sandbox = config.sandboxUrl ? await enableSandbox(config.sandboxUrl, logger) : undefined;
  return {
    config,
    logger,
    metrics,
    redis,
    leaseRedis,
    leases: new LeaseManager(leaseRedis, processOwnerId(service), config.leaseTtlMs),
    sessions: new SessionStore(redis),
    messages: new MessageStore(redis, config.messageRetentionSeconds),
    sandbox,
    startOps: () =>
      startOpsServer({
        port: config.metricsPort,
        metrics,
        defaults: createDefaultMetricsRegistry(),
        ready: async () => {
          const ok = await pingRedis(redis);
          metrics.redisUp.set(ok ? 1 : 0);
          return ok;
        },
      }),
  };
}
