import { isEntryPoint, runService, type ServiceHost } from '@mgw/common';
import type { Metrics } from '@mgw/contracts';
import { startMessengerRuntime } from '@mgw/messenger';
import { loadConnectionConfig } from './config.js';
import { startConnectionWorker } from './connection-worker.js';
import { DisconnectCoordinator } from './disconnect-coordinator.js';
import { Liveness } from './liveness.js';
import { PairingManager } from './pairing-manager.js';

/** A running disconnect's marker outlives the API's wait for it by this much. */
const DISCONNECT_MARKER_MARGIN_MS = 5000;

/**
 * Starts the connection service: as its own process (this file run by node), or, given a host, as one part
 * of the all-in-one process (which imports it).
 */
export async function startConnection(host?: ServiceHost<Metrics>): Promise<void> {
  const config = loadConnectionConfig();
  const rt = await startMessengerRuntime('connection', config, host);
  const { logger, metrics, redis, leases, sessions, messages, encryption, sandbox } = rt;
  // BLPOP waits for the owning sender's logout reply; BullMQ and pub/sub want connections of their own.
  const blocking = rt.connect('worker', 'blocking');
  const bullConnection = rt.connect('worker', 'bull');
  const subscriber = rt.connect('subscriber', 'sub');
  // The liveness id is the lease owner: a pairing record names it, so a dead replica's is stale.
  const liveness = new Liveness(redis, leases.owner, logger);
  const coordinator = new DisconnectCoordinator(
    redis,
    liveness,
    config.connectionReplyTimeoutMs + DISCONNECT_MARKER_MARGIN_MS,
  );
  const pairing = new PairingManager({
    config,
    logger,
    redis,
    encryption,
    leases,
    sessions,
    liveness,
    disconnecting: (deviceId) => coordinator.inProgress(deviceId),
    sandbox,
  });
  await pairing.listen(subscriber, metrics.redisSubscribed);
  const worker = startConnectionWorker({
    config,
    logger,
    metrics,
    redis,
    blocking,
    bullConnection,
    leases,
    sessions,
    messages,
    encryption,
    sandbox,
    pairing,
    coordinator,
  });
  await worker.waitUntilReady();
  // Announced only once the worker takes jobs: the API refuses requests (503) until then.
  await liveness.start();
  // Ready only while the API would hand this process work: a probe (or `npm start`'s `ready:`)
  // that passes means a /connect is not refused as "not running". Also only while it hears
  // other replicas' requests to end a pairing (forceNew, disconnect).
  const ops = await rt.startOps(
    () => worker.isRunning() && liveness.announced() && pairing.listenProblem === undefined,
    () => pairing.listenProblem,
  );
  rt.installShutdown([
    { name: 'connection worker', run: () => worker.close() },
    { name: 'pairing sockets', run: () => pairing.stopAll() },
    { name: 'liveness', run: () => liveness.stop() },
    { name: 'ops server', run: () => ops.close() },
  ]);
  logger.info('connection service started', { owner: leases.owner, metricsPort: ops.port });
}

if (isEntryPoint(import.meta.url)) runService('connection service', () => startConnection());
