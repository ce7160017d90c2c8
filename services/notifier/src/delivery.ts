import { UnrecoverableError, type Job } from 'bullmq';
import { Webhook } from 'standardwebhooks';
import { OutboundError, OutboundRefusedError, type Logger, type OutboundClient } from '@mgw/common';
import type { Metrics, WebhookJobData } from '@mgw/contracts';
import { eventSealContext, type Sealer, type WebhookStore } from '@mgw/store';
import type { TargetCache } from './target-cache.js';

export interface DeliveryDeps {
  webhooks: WebhookStore;
  /** The targets (read at most once a second per device) and the failures in a row. */
  targets: TargetCache;
  /** Opens sealed event data (message.received holds text). */
  sealer: Sealer;
  outbound: OutboundClient;
  timeoutMs: number;
  metrics: Metrics;
  logger: Logger;
}

/** A non-2xx answer or a failed exchange: BullMQ retries it on the schedule. */
export class DeliveryFailedError extends Error {
  override name = 'DeliveryFailedError';
}

const USER_AGENT = 'messenger-gateway-webhooks/1';

/**
 * One delivery attempt of one event (Standard Webhooks): the body and `webhook-id` are the
 * event's own, identical on every attempt; `webhook-timestamp` is the attempt's time and
 * `webhook-signature` holds one signature per secret that signs now (two during a rotation).
 * 2xx: delivered. 410 Gone: the endpoint is disabled and the event dropped. Anything else (other
 * status, timeout, network error): thrown, so the job is retried with backoff.
 */
export async function deliverEvent(
  job: Job<WebhookJobData>,
  deviceId: string,
  deps: DeliveryDeps,
): Promise<'delivered' | 'dropped'> {
  const event = job.data;
  const { metrics } = deps;
  const target = await deps.targets.get(deviceId);
  if (!target || target.disabled) {
    // Removed or disabled since the event was emitted: nobody to deliver to.
    metrics.webhookDeliveries.inc({ type: event.type, outcome: 'dropped' });
    return 'dropped';
  }
  const data = event.sealed
    ? deps.sealer.openText(event.data, eventSealContext(deviceId, event.id))
    : event.data;
  const body = JSON.stringify({ type: event.type, timestamp: event.timestamp, data: JSON.parse(data) });
  const now = new Date();
  const signature = target.secrets.map((secret) => new Webhook(secret).sign(event.id, now, body)).join(' ');
  const started = performance.now();
  let status: number | undefined;
  let problem: string;
  try {
    const res = await deps.outbound.fetch(target.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'webhook-id': event.id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': signature,
      },
      body,
      timeoutMs: deps.timeoutMs,
    });
    status = res.status;
    problem = `the endpoint answered ${res.status}`;
  } catch (err) {
    if (!(err instanceof OutboundError)) throw err;
    problem =
      err instanceof OutboundRefusedError ? `refused by the outbound guard (${err.reason})` : err.reason;
  } finally {
    metrics.webhookAttemptDuration.observe((performance.now() - started) / 1000);
  }

  if (status !== undefined && status >= 200 && status < 300) {
    await deps.targets.succeeded(deviceId);
    metrics.webhookConsecutiveFailures.set({ device: deviceId }, 0);
    metrics.webhookDeliveries.inc({ type: event.type, outcome: 'delivered' });
    metrics.webhookLatency.observe(
      { type: event.type },
      Math.max(0, (Date.now() - Date.parse(event.timestamp)) / 1000),
    );
    return 'delivered';
  }
  if (status === 410) {
    await deps.webhooks.disable(deviceId, 'gone');
    deps.targets.forget(deviceId);
    metrics.webhookDeliveries.inc({ type: event.type, outcome: 'gone' });
    deps.logger.warn('webhook endpoint answered 410 Gone; disabled until it is set again', { deviceId });
    throw new UnrecoverableError('the endpoint answered 410 Gone');
  }
  const failures = await deps.targets.failed(deviceId);
  metrics.webhookConsecutiveFailures.set({ device: deviceId }, failures);
  const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  metrics.webhookDeliveries.inc({ type: event.type, outcome: last ? 'exhausted' : 'retry' });
  deps.logger.info(
    last ? 'webhook delivery failed on its last attempt' : 'webhook delivery failed; will retry',
    {
      deviceId,
      eventId: event.id,
      type: event.type,
      attempt: job.attemptsMade + 1,
      problem,
    },
  );
  throw new DeliveryFailedError(problem);
}
