import { Worker } from 'bullmq';
import {
  BULL_PREFIX,
  WORKER_RUN_RETRY_DELAY_MS,
  CONNECTION_MESSAGES,
  CONNECTION_QUEUE,
  ERRORS,
  type ConnectRequest,
  type ConnectionReply,
  type ConnectionRequest,
  type Metrics,
} from '@mgw/contracts';
import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import { CloudDeviceStore, type SessionStore } from '@mgw/store';
import { hasLinkedCredentials } from '@mgw/messenger';
import { disconnectDevice, type DisconnectDeps } from './disconnect.js';
import type { DisconnectCoordinator } from './disconnect-coordinator.js';
import type { PairingManager } from './pairing-manager.js';

export interface ConnectionWorkerDeps extends DisconnectDeps {
  pairing: PairingManager;
  coordinator: DisconnectCoordinator;
  sessions: SessionStore;
  metrics: Metrics;
  logger: Logger;
  bullConnection: RedisClient;
}

/**
 * Answers the API's connect / disconnect requests (job data = ConnectionRequest, return value =
 * ConnectionReply, passed through by the API). Never throws for an expected outcome: a refusal is
 * `success:false` with an HTTP status, so the API does not wait for retries.
 *
 * Requests of one device never queue behind each other's slow work: a second disconnect joins the
 * running one, a connect joins the running pairing (or answers 409 during a disconnect), so a
 * device occupies a slot or two at most and `CONNECTION_CONCURRENCY` slots serve the others.
 */
export function startConnectionWorker(
  deps: ConnectionWorkerDeps,
): Worker<ConnectionRequest, ConnectionReply> {
  const worker = new Worker<ConnectionRequest, ConnectionReply>(
    CONNECTION_QUEUE,
    async (job) => {
      const req = job.data;
      const log = deps.logger.child({ deviceId: req.deviceId, action: req.action, jobId: job.id });
      // Nobody waits for it any more (picked up late, e.g. after a worker died holding it): a
      // pairing or a logout nobody asked for right now must not start.
      if (req.expiresAt !== undefined && Date.now() > req.expiresAt) {
        log.info('request expired before it was handled; dropped');
        return { success: false, error: ERRORS.connectionTimeout, httpStatus: 504 };
      }
      // One line when a request is taken up and one when it is answered: a request that hangs, or
      // waited long in the queue, shows in the log (these are rare next to messages).
      const takenAt = Date.now();
      log.info('connection request taken up', { queuedMs: takenAt - job.timestamp });
      try {
        const reply = (await isCloud(req.deviceId, deps))
          ? cloudRaced
          : req.action === 'connect'
            ? await connect(req, deps)
            : await disconnect(req.deviceId, deps, req.expiresAt);
        deps.metrics.jobsCompleted.inc({ queue_type: 'connection', kind: req.action });
        const answered = {
          status: reply.success ? 200 : (reply.httpStatus ?? 409),
          tookMs: Date.now() - takenAt,
        };
        // Too late: the API has answered 504 and the client does not know how it ended.
        if (req.expiresAt !== undefined && Date.now() > req.expiresAt)
          log.warn('connection request answered after the API stopped waiting', answered);
        else log.info('connection request answered', answered);
        return reply;
      } catch (err) {
        log.error('connection request failed', { err: serializeError(err) });
        deps.metrics.jobsFailed.inc({ queue_type: 'connection', reason: 'error' });
        return { success: false, error: ERRORS.connectionFailed, httpStatus: 502 };
      }
    },
    {
      connection: deps.bullConnection,
      prefix: BULL_PREFIX,
      concurrency: deps.config.connectionConcurrency,
      runRetryDelay: WORKER_RUN_RETRY_DELAY_MS,
    },
  );
  worker.on('error', (err) => deps.logger.warn('connection worker error', { err: serializeError(err) }));
  return worker;
}

/**
 * A Cloud API device is the API's to connect and disconnect (its features/cloud): a request for one
 * that reaches this service raced a PUT /cloud after the API looked. It must neither pair the
 * device (one device, one engine) nor take it off the senders' roster as an unlinked one would be.
 */
const cloudRaced: ConnectionReply = { success: false, error: ERRORS.cloudDeviceRaced, httpStatus: 409 };

async function isCloud(deviceId: string, deps: ConnectionWorkerDeps): Promise<boolean> {
  return (await new CloudDeviceStore(deps.redis, deps.encryption).engineOf(deviceId)) === 'cloud';
}

async function connect(req: ConnectRequest, deps: ConnectionWorkerDeps): Promise<ConnectionReply> {
  if (req.method === 'pairingCode' && !req.phoneNumber) {
    return { success: false, error: ERRORS.phoneNumberRequired, httpStatus: 400 };
  }
  // The client raced its own /disconnect: whichever way it ends, this connect cannot be served.
  if (await deps.coordinator.inProgress(req.deviceId)) {
    return { success: false, error: ERRORS.disconnectInProgress, httpStatus: 409 };
  }
  if (await hasLinkedCredentials(deps.redis, req.deviceId, deps.encryption)) {
    if (!req.forceNew) {
      const session = await deps.sessions.get(req.deviceId);
      return session.status === 'connected'
        ? { success: true, status: 'connected', message: CONNECTION_MESSAGES.alreadyConnected }
        : {
            success: true,
            status: 'connecting',
            message: CONNECTION_MESSAGES.linkedConnecting,
          };
    }
    // forceNew on a linked device: log the old session out (as /disconnect would), then pair anew.
    const out = await disconnect(req.deviceId, deps, req.expiresAt);
    if (!out.success) return out;
  }
  return deps.pairing.connect(req);
}

async function disconnect(
  deviceId: string,
  deps: ConnectionWorkerDeps,
  answerBy: number | undefined,
): Promise<ConnectionReply> {
  return deps.coordinator.run(deviceId, async () => {
    // A pairing in progress (on any replica) is ended too: nobody should link a device its owner
    // disconnected.
    const cancelled = await deps.pairing.cancelAnywhere(deviceId, 'disconnect_requested');
    const reply = await disconnectDevice(deviceId, deps, answerBy);
    return cancelled && reply.message === CONNECTION_MESSAGES.alreadyDisconnected
      ? { ...reply, message: CONNECTION_MESSAGES.pairingCancelled }
      : reply;
  });
}
