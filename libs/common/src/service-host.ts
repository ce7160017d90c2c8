import type { RedisOptions } from 'ioredis';
import type { RedisConfig } from './config.js';
import { createLogger, serializeError, type Logger } from './logger.js';
import { createDefaultMetricsRegistry, type MetricsRegistry } from './metrics.js';
import { startOpsServer, type OpsOptions, type OpsServer } from './ops-server.js';
import { closeRedis, createRedis, type RedisClient, type RedisRole } from './redis.js';
import { installShutdown, type ShutdownStep } from './shutdown.js';

/**
 * The connections several services in one process may share: stateless command traffic whose
 * users never hold the connection (no SUBSCRIBE, no blocking pop, no WATCH). The general worker
 * connection, the fail-fast connection of leases and readiness probes, and the one BullMQ
 * workers are built from (each worker still opens its own blocking duplicate). Subscribers and
 * blocking connections stay each service's own.
 */
const SHARED: Record<string, { role: RedisRole; pool: string }> = {
  '': { role: 'worker', pool: 'general' },
  // Leases and readiness probes are the same kind of traffic: one fail-fast connection.
  lease: { role: 'producer', pool: 'fail-fast' },
  probe: { role: 'producer', pool: 'fail-fast' },
  bull: { role: 'worker', pool: 'bull' },
};

interface Part {
  service: string;
  ops?: OpsOptions;
  steps: ShutdownStep[];
  timeoutMs: number;
}

export interface ServiceHostOptions<M> {
  /** The `service` of the process's own log lines (each part's lines carry the part's). */
  service: string;
  logLevel: string;
  redis: RedisConfig;
  /** The one metrics catalogue of the process: every part counts into it. */
  metrics: M & { registry: MetricsRegistry };
  /** The parts expected, in shutdown order: the process is ready once each has said so. */
  parts: string[];
  opsPort: number;
  /** `error` of the 503 /readyz body. */
  notReadyError: string;
}

/**
 * Several services in one process (the all-in-one process): what they share instead of each
 * making its own. One logger (every line still names its part), one metrics catalogue and
 * registry, Node's default metrics once, one ops server (ready when every part is), the Redis
 * connections the contracts let them share, and one shutdown that stops the parts in order.
 * A service started on its own has no host: `createServiceRuntime` then makes all of this itself.
 */
export class ServiceHost<M> {
  readonly logger: Logger;
  readonly metrics: M & { registry: MetricsRegistry };
  readonly defaultMetrics: MetricsRegistry;
  private readonly pool = new Map<string, RedisClient>();
  private readonly parts = new Map<string, Part>();
  private ops?: OpsServer;

  constructor(private readonly opts: ServiceHostOptions<M>) {
    this.logger = createLogger({ level: opts.logLevel, service: opts.service });
    this.metrics = opts.metrics;
    this.defaultMetrics = createDefaultMetricsRegistry();
  }

  /** The logger of one part: the same output, with the part's `service` on each line. */
  partLogger(service: string): Logger {
    const logger = this.logger.child({});
    // A child's own metadata yields to the root's `service`: the part's replaces it instead.
    logger.defaultMeta = { service };
    return logger;
  }

  /**
   * The pooled connection for `purpose` (see SHARED), made on first use; undefined when
   * that connection must be the caller's own (another role, options of its own, or a purpose
   * that holds its connection).
   */
  shared(role: RedisRole, purpose: string, options?: RedisOptions): RedisClient | undefined {
    const shared = SHARED[purpose];
    if (options !== undefined || shared?.role !== role) return undefined;
    const { pool } = shared;
    let client = this.pool.get(pool);
    if (!client) {
      // The general connection auto-pipelines, as connection's and sender's own do when they run
      // alone: commands issued in one tick leave in one write (none of its users block or WATCH).
      const options = pool === 'general' ? { enableAutoPipelining: true } : {};
      client = createRedis(this.opts.redis, role, `${this.opts.service}-${pool}`, options);
      this.pool.set(pool, client);
    }
    return client;
  }

  /** Starts the process's ops server: /healthz at once, /readyz once every part is ready. */
  async startOps(host?: string): Promise<OpsServer> {
    this.ops = await startOpsServer({
      port: this.opts.opsPort,
      host,
      registry: this.metrics.registry,
      defaults: this.defaultMetrics,
      notReadyError: this.opts.notReadyError,
      ready: async () => {
        const parts = this.opts.parts.map((name) => this.parts.get(name));
        if (parts.some((p) => p?.ops === undefined)) return false;
        const answers = await Promise.all(parts.map((p) => p!.ops!.ready().catch(() => false)));
        return answers.every(Boolean);
      },
      notReadyReason: () => {
        for (const part of this.parts.values()) {
          const reason = part.ops?.notReadyReason?.();
          if (reason) return `${part.service}: ${reason}`;
        }
        return undefined;
      },
      collect: async () => {
        await Promise.all([...this.parts.values()].map((p) => p.ops?.collect?.().catch(() => undefined)));
      },
    });
    return this.ops;
  }

  /** A part's readiness and scrape-time gauges join the process's ops server. */
  addOps(service: string, ops: OpsOptions): OpsServer {
    this.part(service).ops = ops;
    return { port: this.ops?.port ?? this.opts.opsPort, close: async () => undefined };
  }

  /** A part's shutdown steps (its own connections last), run when the process stops. */
  addShutdown(service: string, steps: ShutdownStep[], timeoutMs: number): () => Promise<void> {
    const part = this.part(service);
    part.steps = steps;
    part.timeoutMs = timeoutMs;
    return () => this.stop();
  }

  private shutdown?: () => Promise<void>;

  /** Stops every part as on SIGTERM (installing the shutdown first if it was not yet). */
  stop(): Promise<void> {
    return (this.shutdown ?? this.installShutdown())();
  }

  /**
   * On SIGTERM/SIGINT or a crash: the parts' steps in the order of `parts` (the API stops taking
   * requests first; the connection service, the sender handing its devices over, the notifier),
   * then the ops server, then every part's connections and the shared ones. The time allowed is
   * the longest any part allows. Installed once every part has started (as a service on its own
   * does); `stop()` takes the same path before that.
   */
  installShutdown(): () => Promise<void> {
    if (this.shutdown) return this.shutdown;
    const ordered = () => [
      ...this.opts.parts.map((name) => this.parts.get(name)).filter((p): p is Part => p !== undefined),
      ...[...this.parts.values()].filter((p) => !this.opts.parts.includes(p.service)),
    ];
    const isRedis = (s: ShutdownStep) => s.name === 'redis';
    // The traces' flush (one SDK for the process) waits for every part's last spans.
    const isLast = (s: ShutdownStep) => isRedis(s) || s.name === 'traces';
    const steps: ShutdownStep[] = [
      {
        name: 'parts',
        run: async () => {
          for (const part of ordered()) {
            for (const step of part.steps.filter((s) => !isLast(s))) {
              try {
                await step.run();
              } catch (err) {
                this.logger.warn('shutdown step failed', {
                  part: part.service,
                  step: step.name,
                  err: serializeError(err),
                });
              }
            }
          }
        },
      },
      { name: 'ops server', run: () => this.ops?.close() },
      {
        name: 'traces',
        run: async () => {
          const flushes = ordered().flatMap((p) => p.steps.filter((s) => s.name === 'traces'));
          await Promise.all(flushes.map((s) => s.run()));
        },
      },
      {
        name: 'redis',
        run: async () => {
          await Promise.all(ordered().flatMap((p) => p.steps.filter(isRedis).map((s) => s.run())));
          await closeRedis(...this.pool.values());
        },
      },
    ];
    const timeoutMs = Math.max(10_000, ...[...this.parts.values()].map((p) => p.timeoutMs));
    this.shutdown = installShutdown(this.logger, steps, timeoutMs);
    return this.shutdown;
  }

  private part(service: string): Part {
    let part = this.parts.get(service);
    if (!part) {
      part = { service, steps: [], timeoutMs: 0 };
      this.parts.set(service, part);
    }
    return part;
  }
}
