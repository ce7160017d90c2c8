/**
 * The all-in-one process, for small installs: the api, connection, sender and notifier services
 * in one Node process. Each part is the function the service's own main.ts runs — the same code, talking to
 * the others through the same Redis keys, BullMQ queues and pub/sub channels as when each runs as
 * a process of its own. What the parts share is the process's: one logger, one metrics registry
 * and ops server (METRICS_PORT; ready when every part is), the Redis connections that carry
 * plain commands, and one shutdown that stops them in order. Production (k8s/) keeps one service
 * per process: docs/operations.md says when to use which.
 */
import { ConfigError, ServiceHost, runService, tracingWanted } from '@mgw/common';
import { ERRORS, createMetrics, type Metrics } from '@mgw/contracts';
import { loadApiConfig } from '@mgw/api/config';
import { startApi } from '@mgw/api';
import { loadConnectionConfig } from '@mgw/connection/config';
import { startConnection } from '@mgw/connection';
import { loadNotifierConfig } from '@mgw/notifier/config';
import { startNotifier } from '@mgw/notifier';
import { loadSenderConfig } from '@mgw/sender/config';
import { startSender } from '@mgw/sender';

interface Part {
  name: string;
  /** Validates the part's configuration (throws ConfigError naming the variable). */
  load: () => unknown;
  start: (host: ServiceHost<Metrics>) => Promise<void>;
}

/**
 * In shutdown order: the API stops taking requests first, then the connection service, the
 * sender (hands its devices over), the notifier. They start the other way round, so the API
 * takes requests only once the parts that serve them run.
 */
const PARTS: Part[] = [
  { name: 'api', load: loadApiConfig, start: startApi },
  { name: 'connection', load: loadConnectionConfig, start: startConnection },
  { name: 'sender', load: loadSenderConfig, start: startSender },
  { name: 'notifier', load: loadNotifierConfig, start: startNotifier },
];

/** Every part's configuration, checked before anything starts: a bad value names its part. */
function validateParts(): ReturnType<typeof loadApiConfig> {
  // The parts share most variables: a problem several have is said once, with the parts it stops.
  const PREFIX = 'Invalid configuration: ';
  const problems = new Map<string, string[]>();
  for (const part of PARTS) {
    try {
      part.load();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      for (const problem of err.message.replace(PREFIX, '').split('; '))
        problems.set(problem, [...(problems.get(problem) ?? []), part.name]);
    }
  }
  if (problems.size > 0) {
    const said = [...problems].map(([problem, parts]) => `${problem} (${parts.join(', ')})`);
    throw new ConfigError(`${PREFIX}${said.join('; ')}`);
  }
  return loadApiConfig();
}

async function main(): Promise<void> {
  // The settings every part shares (log level, Redis, METRICS_PORT, HOST) read as the API reads them.
  const config = validateParts();
  const host = new ServiceHost<Metrics>({
    service: 'all-in-one',
    logLevel: config.logLevel,
    redis: config.redis,
    metrics: createMetrics({ exemplars: tracingWanted() }),
    parts: PARTS.map((p) => p.name),
    opsPort: config.ops.port,
    notReadyError: ERRORS.serviceUnavailable,
  });
  const ops = await host.startOps(config.host);
  try {
    for (const part of [...PARTS].reverse()) await part.start(host);
  } catch (err) {
    // What started stops as on SIGTERM (devices handed over, connections closed) before the exit.
    await host.stop();
    throw err;
  }
  host.installShutdown();
  host.logger.info('all-in-one started', {
    parts: PARTS.map((p) => p.name),
    port: config.port,
    metricsPort: ops.port,
  });
}

runService('all-in-one', main);
