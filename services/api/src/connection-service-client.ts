import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { serializeError, type Logger } from '@mgw/common';
import { ApiError } from './api-error.js';
import {
  BULL_PREFIX,
  CONNECTION_QUEUE,
  ERRORS,
  type ConnectionReply,
  type ConnectionRequest,
  type Metrics,
} from '@mgw/contracts';
import type { Outcome } from './idempotency.js';
import { waitForJob, type QueueEventsPool } from './queue-events-pool.js';

/**
 * Request/reply with the connection service: a job on CONNECTION_QUEUE whose return value is the
 * ConnectionReply. The API never opens a WhatsApp socket itself.
 */
export class ConnectionServiceClient {
  readonly queue: Queue<ConnectionRequest, ConnectionReply>;

  constructor(
    private readonly deps: {
      redis: Redis;
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
  }

  /** Sends the request and turns the reply into the HTTP answer; 504 when nobody answers in time. */
  async request(request: ConnectionRequest, log: Logger = this.deps.logger): Promise<Outcome> {
    const { events, replyTimeoutMs, metrics } = this.deps;
    const { job, outcome } = await events.use(this.queue, async (queueEvents) => {
      const added = await this.queue.add(request.action, request, {
        attempts: 1,
        removeOnComplete: { age: 3600 },
        removeOnFail: { age: 24 * 3600 },
      });
      metrics.jobsEnqueued.inc({ queue_type: 'connection', kind: request.action });
      return {
        job: added,
        outcome: await waitForJob<ConnectionReply>(this.queue, added, queueEvents, replyTimeoutMs),
      };
    });
    if (outcome.kind === 'timeout' || outcome.kind === 'removed') {
      // An unanswered request must not start a pairing minutes later; remove it if still waiting.
      await job.remove().catch(() => undefined);
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
