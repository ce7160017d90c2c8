import {
  createServiceRuntime,
  type OpsServer,
  type RedisClient,
  type ServiceHost,
  type ServiceRuntime,
  tracingWanted,
} from '@mgw/common';
import { ERRORS, createMetrics, keys, type Metrics } from '@mgw/contracts';
import { Encryption, MessageStore, SessionStore } from '@mgw/store';
import type { MessengerServiceConfig } from './config.js';
import { configureAuthCache } from './auth-cache.js';
import { LeaseManager, processOwnerId } from './lease.js';
import { routeLibsignalConsole } from './libsignal-console.js';
import { enableSandbox, type SandboxSocketOptions } from './sandbox.js';

/**
 * What the connection and sender services both start with: every service's runtime (logger,
 * Redis, metrics, ops server, shutdown), and the pieces around a Baileys socket.
 */
export interface MessengerRuntime extends Omit<ServiceRuntime<Metrics>, 'startOps'> {
  /** Fail-fast connection for leases, so an outage reads as an "unknown" renewal at once. */
  leaseRedis: RedisClient;
  leases: LeaseManager;
  sessions: SessionStore;
  messages: MessageStore;
  /** Built once from MGW_ENCRYPTION_KEY (and old keys): seals what the sockets store. */
  encryption: Encryption;
  sandbox?: SandboxSocketOptions;
  /**
   * Starts /metrics, /healthz and /readyz on the ops port: ready when Redis accepts writes and
   * `serving()` (the service's own part) holds; `notServingReason()` is the 503's `details.reason`.
   */
  startOps(serving?: () => boolean, notServingReason?: () => string | undefined): Promise<OpsServer>;
}

export async function startMessengerRuntime(
  service: 'connection' | 'sender',
  config: MessengerServiceConfig,
  /** The process this service is a part of (the all-in-one process), if any. */
  host?: ServiceHost<Metrics>,
): Promise<MessengerRuntime> {
  // The general connection waits out short Redis outages (worker role). Auto-pipelining: the
  // commands the sockets and jobs issue in one tick leave in one write (no blocking command
  // runs on it), which is most of the sender's per-message Redis cost in syscalls. In the
  // all-in-one process the parts share the host's general connection, which auto-pipelines too.
  const rt = createServiceRuntime({
    service,
    config,
    metrics: host?.metrics ?? createMetrics({ exemplars: tracingWanted() }),
    redis: host ? 'worker' : { role: 'worker', options: { enableAutoPipelining: true } },
    host,
  });
  const { logger, metrics, redis } = rt;
  routeLibsignalConsole(logger);
  const encryption = Encryption.fromConfig(config.encryption);
  const leaseRedis = rt.connect('producer', 'lease');
  await rt.waitForRedis(leaseRedis);
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
    ...rt,
    leaseRedis,
    leases: new LeaseManager(leaseRedis, owner, config.messenger.lease.ttlMs),
    sessions: new SessionStore(redis),
    messages: new MessageStore(redis, config.store.messageRetentionSeconds),
    encryption,
    sandbox,
    startOps: (serving, notServingReason) =>
      rt.startOps({
        probe: leaseRedis,
        probeKey: keys.readyProbe(owner),
        notReadyError: ERRORS.serviceUnavailable,
        serving,
        notServingReason,
      }),
  };
}
