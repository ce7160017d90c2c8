import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { RedisOptions } from 'ioredis';
import type { OpsConfig, RedisConfig, RuntimeConfig } from './config.js';
import { createLogger, serializeError, type Logger } from './logger.js';
import { createDefaultMetricsRegistry, type MetricsRegistry } from './metrics.js';
import { startOpsServer, type OpsOptions, type OpsServer } from './ops-server.js';
import {
  closeRedis,
  createRedis,
  redisAcceptsWrites,
  waitForRedis,
  type RedisClient,
  type RedisRole,
} from './redis.js';
import type { ServiceHost } from './service-host.js';
import { installShutdown, type ShutdownStep } from './shutdown.js';
import { startTracing } from './tracing.js';

/** What every service's configuration holds (`runtimeEnv`, `redisEnv` and `opsEnv`). */
export interface ServiceConfig extends RuntimeConfig {
  redis: RedisConfig;
  ops: OpsConfig;
}

/** The part of a service's metrics the runtime serves and sets. */
export interface ServiceMetrics {
  /** The service's own metrics (linted by promtool). */
  registry: MetricsRegistry;
  /** Set by each readiness probe: 1 when Redis accepted the probe's write, else 0. */
  redisUp: { set(value: number): void };
}

export interface ServiceRuntimeOptions<M extends ServiceMetrics> {
  /** The `service` of every log line; also names the Redis connections (`mgw-<service>-<purpose>`). */
  service: string;
  config: ServiceConfig;
  /** Built by the caller: the product's metric catalogue is not this library's to know. */
  metrics: M;
  /** The general-purpose connection's role, and options such as auto-pipelining. */
  redis: RedisRole | { role: RedisRole; options: RedisOptions };
  /**
   * The process this service is one part of (the all-in-one process): its logger, metrics, ops
   * server, shutdown and shareable connections are the host's. Without it, the service's own.
   */
  host?: ServiceHost<M>;
}

export interface Readiness {
  /** A fail-fast (producer) connection: a worker one would queue the probe through an outage. */
  probe: RedisClient;
  /** The key the probe writes (it expires by itself). */
  probeKey: string;
  /** `error` of the 503 /readyz body. */
  notReadyError: string;
  /** Refreshes gauges read from elsewhere before each scrape. */
  collect?: () => Promise<void>;
  /**
   * What else must hold, beside Redis accepting writes, for the service to do its work (e.g. the
   * connection service's worker takes jobs and its liveness is announced). Checked on each probe.
   */
  serving?: () => boolean;
  /** Why it is not serving (the 503's `details.reason`), e.g. a lost subscription. */
  notServingReason?: () => string | undefined;
}

/** What every service starts with, whatever it does. */
export interface ServiceRuntime<M extends ServiceMetrics> {
  logger: Logger;
  metrics: M;
  /** Node's default metrics, served after the service's own. */
  defaultMetrics: MetricsRegistry;
  /** The general-purpose connection, named after the service. */
  redis: RedisClient;
  /** Opens another connection (`mgw-<service>-<purpose>`); it is closed with the others. */
  connect(role: RedisRole, purpose: string, options?: RedisOptions): RedisClient;
  /**
   * Resolves when the general connection and `others` are ready (and traces, when an OTLP endpoint
   * is set, are being exported: tracing.ts). Otherwise logs it, closes every connection and
   * rejects: a service that cannot reach Redis at start has nothing to do.
   */
  waitForRedis(...others: RedisClient[]): Promise<void>;
  /** /metrics, /healthz and /readyz (ready when Redis accepts a write and `serving()` holds) on the ops port. */
  startOps(readiness: Readiness): Promise<OpsServer>;
  /**
   * Serves `ops` on the ops port (`host`: the address to bind) — or, in a host process, adds its
   * readiness and gauges to the host's one ops server.
   */
  serveOps(ops: OpsOptions, host?: string): Promise<OpsServer>;
  /**
   * On SIGTERM/SIGINT or a crash, runs `steps` in order and then closes every connection
   * (storage last: the steps may still need it). Returns the function that does the same.
   */
  installShutdown(steps: ShutdownStep[]): () => Promise<void>;
  /** Closes every connection the runtime opened. */
  close(): Promise<void>;
}

export function createServiceRuntime<M extends ServiceMetrics>(
  opts: ServiceRuntimeOptions<M>,
): ServiceRuntime<M> {
  const { service, config, metrics, host } = opts;
  const logger = host ? host.partLogger(service) : createLogger({ level: config.logLevel, service });
  const connections: RedisClient[] = [];
  const open = (role: RedisRole, purpose: string, options?: RedisOptions) => {
    const shared = host?.shared(role, purpose, options);
    if (shared) return shared;
    const client = createRedis(config.redis, role, purpose ? `${service}-${purpose}` : service, options);
    connections.push(client);
    return client;
  };
  const main = typeof opts.redis === 'string' ? { role: opts.redis, options: undefined } : opts.redis;
  const redis = open(main.role, '', main.options);
  const close = () => closeRedis(...connections);
  // Once per process (a host's parts find it started); the SDK loads only when traces are wanted.
  const tracing = startTracing({ service: host ? 'all-in-one' : service }).catch((err: unknown) => {
    logger.error('tracing could not start; check the OTEL_ variables', { err: serializeError(err) });
    return undefined;
  });
  const defaultMetrics = host ? host.defaultMetrics : createDefaultMetricsRegistry();
  const serveOps = async (ops: OpsOptions, bind?: string): Promise<OpsServer> =>
    host
      ? host.addOps(service, ops)
      : startOpsServer({ ...ops, port: config.ops.port, host: bind ?? config.ops.host });
  return {
    logger,
    metrics,
    defaultMetrics,
    redis,
    connect: (role, purpose, options) => open(role, purpose, options),
    async waitForRedis(...others) {
      try {
        await tracing;
        await Promise.all([redis, ...others].map((client) => waitForRedis(client)));
      } catch (err) {
        logger.error('Redis is not reachable; check REDIS_URL (or REDIS_SENTINELS, REDIS_CLUSTER_NODES)', {
          err: serializeError(err),
        });
        await close();
        throw err;
      }
    },
    startOps: ({ probe, probeKey, notReadyError, collect, serving, notServingReason }) =>
      serveOps({
        registry: metrics.registry,
        defaults: defaultMetrics,
        notReadyError,
        ready: async () => {
          const ok = await redisAcceptsWrites(probe, probeKey);
          metrics.redisUp.set(ok ? 1 : 0);
          return ok && (serving?.() ?? true);
        },
        notReadyReason: () => (serving?.() === false ? notServingReason?.() : undefined),
        collect,
      }),
    serveOps,
    installShutdown: (steps) => {
      // The spans of the last messages are flushed before the connections close.
      const flush = { name: 'traces', run: async () => (await tracing)?.() };
      const all = [...steps, flush, { name: 'redis', run: close }];
      return host
        ? host.addShutdown(service, all, config.shutdownTimeoutMs)
        : installShutdown(logger, all, config.shutdownTimeoutMs);
    },
    close,
  };
}

/**
 * Runs a service's `main`. A failure to start is one JSON line on stderr (the logger may not
 * exist yet: the configuration is read first) and exit code 1.
 */
export function runService(label: string, main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    process.stderr.write(`${label} failed to start: ${JSON.stringify(serializeError(err))}\n`);
    process.exit(1);
  });
}

/**
 * True when `moduleUrl` is the file node was started with (through any symlink, such as the
 * image's /app/main.js): a service's main.ts then runs the service, and not when the all-in-one
 * process imports it to run it as one of its parts.
 */
export function isEntryPoint(moduleUrl: string): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(moduleUrl));
  } catch {
    return false;
  }
}
