import { Webhook } from 'standardwebhooks';
import {
  contextOf,
  inSpan,
  maskNumbers,
  observeTraced,
  OutboundError,
  OutboundRefusedError,
  SpanKind,
  SpanStatusCode,
  tracer,
  tracingOn,
  type Logger,
  type OutboundClient,
} from '@mgw/common';
import type { Metrics } from '@mgw/contracts';
import {
  eventSealContext,
  SealedValueError,
  type PendingDelivery,
  type Sealer,
  type WebhookStore,
} from '@mgw/store';
import type { TargetCache } from './target-cache.js';

export interface DeliveryDeps {
  webhooks: WebhookStore;
  /** The targets (read at most once a second per device) and the failures in a row. */
  targets: TargetCache;
  /** Opens sealed event data (message.received holds text). */
  sealer: Sealer;
  outbound: OutboundClient;
  timeoutMs: number;
  /** Attempts of one event in all, the first included. */
  maxAttempts: number;
  metrics: Metrics;
  logger: Logger;
}

/**
 * How an attempt ended: `delivered` (2xx), `dropped` (no endpoint, or it is disabled), `gone`
 * (410: the endpoint is now disabled), `retry` (failed, another attempt follows on the schedule),
 * `exhausted` (failed on the last attempt), `unreadable` (its sealed data cannot be opened: it
 * never will, so it is not attempted again).
 */
export type AttemptResult = 'delivered' | 'dropped' | 'gone' | 'retry' | 'exhausted' | 'unreadable';

const USER_AGENT = 'messenger-gateway-webhooks/1';

/**
 * One delivery attempt of one event (Standard Webhooks): the body and `webhook-id` are the
 * event's own, identical on every attempt; `webhook-timestamp` is the attempt's time and
 * `webhook-signature` holds one signature per secret that signs now (two during a rotation).
 * 2xx: delivered. 410 Gone: the endpoint is disabled and the event dropped. Anything else (other
 * status, timeout, network error): retried with backoff until the last attempt.
 */
export async function deliverEvent(
  delivery: PendingDelivery,
  deviceId: string,
  deps: DeliveryDeps,
): Promise<AttemptResult> {
  return (await attemptDelivery(delivery, deviceId, deps)).result;
}

const notifier = tracer('notifier');

/**
 * {@link attemptDelivery} in a span of the trace of the message the event is about (`webhook.deliver`,
 * one per attempt; its own trace when the event carries none): the event's type and id, the
 * attempt's number, the endpoint's status and the outcome. Not the URL (it may hold a token).
 */
export function tracedAttempt(
  delivery: PendingDelivery,
  deviceId: string,
  deps: DeliveryDeps,
): Promise<AttemptAnswer> {
  if (!tracingOn()) return attemptDelivery(delivery, deviceId, deps);
  const { event } = delivery;
  return inSpan(
    notifier,
    'webhook.deliver',
    {
      kind: SpanKind.CLIENT,
      parent: contextOf(event.traceparent),
      attributes: {
        'mgw.device': deviceId,
        'mgw.event.type': event.type,
        'mgw.event.id': event.id,
        'mgw.attempt': delivery.attemptsMade + 1,
      },
    },
    async (span) => {
      const answer = await attemptDelivery(delivery, deviceId, deps);
      span.setAttribute('mgw.outcome', answer.result);
      if (answer.status !== undefined) span.setAttribute('http.response.status_code', answer.status);
      if (answer.result === 'retry' || answer.result === 'exhausted')
        span.setStatus({ code: SpanStatusCode.ERROR, message: maskNumbers(answer.problem ?? '') });
      return answer;
    },
  );
}

/** How an attempt ended, with what the endpoint answered (the device's delivery report keeps it). */
export interface AttemptAnswer {
  result: AttemptResult;
  /** The endpoint's HTTP status, when it answered. */
  status?: number;
  /** Why it failed: the status, the outbound guard's refusal, a timeout or network error. */
  problem?: string;
}

/** {@link deliverEvent}, answering the endpoint's status and the failure's reason too. */
export async function attemptDelivery(
  delivery: PendingDelivery,
  deviceId: string,
  deps: DeliveryDeps,
): Promise<AttemptAnswer> {
  const { event } = delivery;
  const { metrics } = deps;
  const target = await deps.targets.get(deviceId);
  if (!target || target.disabled) {
    // Removed or disabled since the event was emitted: nobody to deliver to.
    metrics.webhookDeliveries.inc({ type: event.type, outcome: 'dropped' });
    return { result: 'dropped', problem: target ? 'the endpoint is disabled' : 'no endpoint' };
  }
  let data = event.data;
  try {
    if (event.sealed) data = deps.sealer.openText(event.data, eventSealContext(deviceId, event.id));
  } catch (err) {
    // Sealed under a key no longer configured (or tampered): retrying cannot open it.
    if (!(err instanceof SealedValueError)) throw err;
    metrics.webhookDeliveries.inc({ type: event.type, outcome: 'unreadable' });
    deps.logger.error('webhook event cannot be opened; not delivered', {
      deviceId,
      eventId: event.id,
      type: event.type,
      problem: err.problem,
    });
    return { result: 'unreadable', problem: 'its sealed data cannot be opened' };
  }
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
    observeTraced(metrics.webhookAttemptDuration, {}, (performance.now() - started) / 1000);
  }

  if (status !== undefined && status >= 200 && status < 300) {
    await deps.targets.succeeded(deviceId);
    metrics.webhookConsecutiveFailures.set({ device: deviceId }, 0);
    metrics.webhookDeliveries.inc({ type: event.type, outcome: 'delivered' });
    observeTraced(
      metrics.webhookLatency,
      { type: event.type },
      Math.max(0, (Date.now() - Date.parse(event.timestamp)) / 1000),
    );
    return { result: 'delivered', status };
  }
  if (status === 410) {
    await deps.webhooks.disable(deviceId, 'gone');
    deps.targets.forget(deviceId);
    metrics.webhookDeliveries.inc({ type: event.type, outcome: 'gone' });
    deps.logger.warn('webhook endpoint answered 410 Gone; disabled until it is set again', { deviceId });
    return { result: 'gone', status, problem };
  }
  const failures = await deps.targets.failed(deviceId);
  metrics.webhookConsecutiveFailures.set({ device: deviceId }, failures);
  const last = delivery.attemptsMade + 1 >= deps.maxAttempts;
  metrics.webhookDeliveries.inc({ type: event.type, outcome: last ? 'exhausted' : 'retry' });
  deps.logger.info(
    last ? 'webhook delivery failed on its last attempt' : 'webhook delivery failed; will retry',
    {
      deviceId,
      eventId: event.id,
      type: event.type,
      attempt: delivery.attemptsMade + 1,
      problem,
    },
  );
  return { result: last ? 'exhausted' : 'retry', ...(status !== undefined ? { status } : {}), problem };
}
