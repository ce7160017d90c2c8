import { Queue } from 'bullmq';
import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import { ApiError } from '../http/api-error.js';
import {
  BULL_PREFIX,
  CONNECTION_QUEUE,
  ERRORS,
  type ConnectionReply,
  type ConnectionRequest,
  type Metrics,
} from '@mgw/contracts';
import { ConnectionLiveness } from './connection-liveness.js';
import type { Outcome } from '../http/idempotency.js';
import { waitForJob, type QueueEventsPool } from './queue-events-pool.js';

/** How often a waiting request re-reads the (cached) liveness of the connection service. */
const LIVENESS_WATCH_MS = 1000;

/**
 * Request/reply with the connection service: a job on CONNECTION_QUEUE whose return value is the
 * ConnectionReply. The API never opens a WhatsApp socket itself.
 *
 * - No connection service alive: 503 at once, and a request already waiting ends with 503 as
 *   soon as the last one's liveness lapses (not after CONNECTION_REPLY_TIMEOUT_MS).
 * - Identical requests of one device in flight on this process share one job and one answer, so
 *   a burst does not fill the connection service's slots with copies.
 */
export class ConnectionServiceClient {
  readonly queue: Queue<ConnectionRequest, ConnectionReply>;
  readonly liveness: ConnectionLiveness;
  private readonly inflight = new Map<string, Promise<Outcome>>();

  constructor(
    private readonly deps: {
      redis: RedisClient;
      events: QueueEventsPool;
      replyTimeoutMs: number;
      metrics: Metrics;
      logger: Logger;
    },
  ) {
    this.queue = new Queue<ConnectionRequest, ConnectionReply>(CONNECTION_QUEUE, {
      connection: deps.redis,
      prefix: BULL_PREFIX,
    });
    this.queue.on('error', (err) => deps.logger.warn('connection queue error', { err: serializeError(err) }));
    // Every request waiting for its reply (any device) adds a 'closing' listener here (BullMQ's
    // waitUntilFinished), taken off when its wait ends: many at once are not a leak.
    this.queue.setMaxListeners(0);
    this.liveness = new ConnectionLiveness(deps.redis);
  }

  /** Sends the request (or joins an identical one) and turns the reply into the HTTP answer. */
  async request(request: ConnectionRequest, log: Logger = this.deps.logger): Promise<Outcome> {
    const key = coalescingKey(request);
    let shared = this.inflight.get(key);
    if (!shared) {
      shared = this.send(request, log).finally(() => this.inflight.delete(key));
      this.inflight.set(key, shared);
    }
    const { status, body } = await shared;
    return { status, body: { ...body } };
  }

  private async send(request: ConnectionRequest, log: Logger): Promise<Outcome> {
    const { events, replyTimeoutMs, metrics } = this.deps;
    if (!(await this.liveness.alive())) {
      log.warn('no connection service alive; request refused', { action: request.action });
      throw new ApiError(503, ERRORS.connectionServiceDown);
    }
    const abort = new AbortController();
    const { job, outcome } = await events.use(this.queue, async (queueEvents) => {
      const added = await this.queue.add(
        request.action,
        { ...request, expiresAt: Date.now() + replyTimeoutMs },
        { attempts: 1, removeOnComplete: { age: 3600 }, removeOnFail: { age: 24 * 3600 } },
      );
      metrics.jobsEnqueued.inc({ queue_type: 'connection', kind: request.action });
      const watch = setInterval(() => {
        this.liveness.alive().then(
          (alive) => alive || abort.abort(),
          () => undefined,
        );
      }, LIVENESS_WATCH_MS);
      try {
        return {
          job: added,
          outcome: await waitForJob<ConnectionReply>(
            this.queue,
            added,
            queueEvents,
            replyTimeoutMs,
            abort.signal,
          ),
        };
      } finally {
        clearInterval(watch);
      }
    });
    if (outcome.kind === 'timeout' || outcome.kind === 'removed') {
      // An unanswered request must not start a pairing minutes later; remove it if still waiting
      // (one already taken by a worker that died is dropped by the next one: it has expired).
      await job.remove().catch(() => undefined);
      if (abort.signal.aborted) {
        log.warn('the connection service stopped while the request waited', { action: request.action });
        throw new ApiError(503, ERRORS.connectionServiceDown);
      }
      throw new ApiError(504, ERRORS.connectionTimeout);
    }
    if (outcome.kind === 'failed') {
      log.warn('connection request failed', { action: request.action, reason: outcome.reason });
      return { status: 502, body: { success: false, error: ERRORS.connectionFailed } };
    }
    return toOutcome(outcome.value);
  }

  async close(): Promise<void> {
    await this.queue.close().catch(() => undefined);
  }
}

/** Requests with this key would get the same answer. */
function coalescingKey(r: ConnectionRequest): string {
  if (r.action === 'disconnect') return `disconnect|${r.deviceId}`;
  return ['connect', r.deviceId, r.method, r.phoneNumber ?? '', r.forceNew, r.rawQrCode].join('|');
}

function toOutcome(reply: ConnectionReply | null | undefined): Outcome {
  if (!reply || reply.success !== true) {
    const status =
      reply?.httpStatus &&
      Number.isInteger(reply.httpStatus) &&
      reply.httpStatus >= 400 &&
      reply.httpStatus < 600
        ? reply.httpStatus
        : 409;
    return { status, body: { success: false, error: reply?.error || ERRORS.connectionRefused } };
  }
  const body: Record<string, unknown> = { success: true };
  for (const field of ['status', 'qrCode', 'pairingCode', 'message'] as const) {
    if (reply[field] !== undefined) body[field] = reply[field];
  }
  return { status: 200, body };
}
