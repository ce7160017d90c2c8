import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  BULL_PREFIX,
  CONNECTION_MESSAGES,
  CONNECTION_QUEUE,
  ERRORS,
  type ConnectRequest,
  type ConnectionReply,
  type ConnectionRequest,
  type Metrics,
} from '@mgw/contracts';
import { serializeError, type Logger } from '@mgw/common';
import { type SessionStore } from '@mgw/store';
import { hasLinkedCredentials } from '@mgw/messenger';
import { disconnectDevice, type DisconnectDeps } from './disconnect.js';
import type { PairingManager } from './pairing-manager.js';

export interface ConnectionWorkerDeps extends DisconnectDeps {
  pairing: PairingManager;
  sessions: SessionStore;
  metrics: Metrics;
  logger: Logger;
  bullConnection: Redis;
}

/**
 * Answers the API's connect / disconnect requests (job data = ConnectionRequest, return value =
 * ConnectionReply, passed through by the API). Never throws for an expected outcome: a refusal is
 * `success:false` with an HTTP status, so the API does not wait for retries.
 */
export function startConnectionWorker(
  deps: ConnectionWorkerDeps,
): Worker<ConnectionRequest, ConnectionReply> {
  const worker = new Worker<ConnectionRequest, ConnectionReply>(
    CONNECTION_QUEUE,
    async (job) => {
      const req = job.data;
      const log = deps.logger.child({ deviceId: req.deviceId, action: req.action, jobId: job.id });
      try {
        const reply =
          req.action === 'connect' ? await connect(req, deps) : await disconnect(req.deviceId, deps);
        deps.metrics.jobsCompleted.inc({ queue_type: 'connection', kind: req.action });
        return reply;
      } catch (err) {
        log.error('connection request failed', { err: serializeError(err) });
        deps.metrics.jobsFailed.inc({ queue_type: 'connection', reason: 'error' });
        return {
          success: false,
          error: ERRORS.connectionServiceError,
          httpStatus: 500,
        };
      }
    },
    // Pairing requests wait for WhatsApp's first QR; several devices may pair at once.
    { connection: deps.bullConnection, prefix: BULL_PREFIX, concurrency: 16 },
  );
  worker.on('error', (err) => deps.logger.warn('connection worker error', { err: serializeError(err) }));
  return worker;
}

async function connect(req: ConnectRequest, deps: ConnectionWorkerDeps): Promise<ConnectionReply> {
  if (req.method === 'pairingCode' && !req.phoneNumber) {
    return { success: false, error: ERRORS.phoneNumberRequired, httpStatus: 400 };
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
    const out = await disconnectDevice(req.deviceId, deps);
    if (!out.success) return out;
  }
  return deps.pairing.connect(req);
}

async function disconnect(deviceId: string, deps: ConnectionWorkerDeps): Promise<ConnectionReply> {
  // A pairing in progress here is ended too: nobody should link a device its owner disconnected.
  const cancelled = await deps.pairing.cancel(deviceId, 'disconnect_requested');
  const reply = await disconnectDevice(deviceId, deps);
  return cancelled && reply.message === CONNECTION_MESSAGES.alreadyDisconnected
    ? { ...reply, message: CONNECTION_MESSAGES.pairingCancelled }
    : reply;
}
