import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { leaseHolder } from '../coordination/lease.js';
import { storeScript } from '../lua.js';
import { webhookDeliveryKeys } from './webhook-deliveries.js';

/**
 * What a device's ways out did lately, for the operator (the dashboard's Events tab): a small
 * hash per device next to the delivery state it reports on.
 *
 * - `…:webhook:report` — written by the notifier where it settles each attempt (under the same
 *   lease, fenced: see `lua/webhook-report-record-3.lua`): the last attempt, the last delivery,
 *   the last failure (each as JSON), how many events were dropped after their last attempt
 *   (`exhausted`), and the last "retry now" (`retryNowAt`, `retryNowCount`). Removed with the
 *   endpoint (`WebhookStore.remove`) and expires {@link REPORT_TTL_SECONDS} after its last write.
 * - `…:broker:<transport>:report` — written by the broker relay when a publish fails: the
 *   transport's last error for the device (`lastErrorAt`, `lastError`, `failures`); same TTL.
 *
 * Nothing here holds an event's data, a URL or a secret: ids, types, times, statuses and the
 * (scrubbed) error the notifier logs anyway.
 */
export const REPORT_TTL_SECONDS = 7 * 86_400;

export const webhookReportKey = (deviceId: string) => `${keys.webhook(deviceId)}:report`;
export const brokerReportKey = (deviceId: string, transport: string) =>
  `${keys.brokerCursor(deviceId, transport).replace(/:cursor$/, '')}:report`;

/** How one attempt (or non-attempt) of one event ended, as the report keeps it. */
export interface AttemptFacts {
  /** When it ended (ISO). */
  at: string;
  eventId: string;
  type: string;
  /** The notifier's outcome: delivered, retry, exhausted, gone, dropped, unreadable. */
  outcome: string;
  /** Its number (1 = the first attempt). */
  attempt: number;
  /** The endpoint's HTTP status, when it answered. */
  status?: number;
  /** Why it failed (no response body, no URL): e.g. "the endpoint answered 500", a timeout. */
  error?: string;
}

/** The device's webhook as its report and delivery state tell it. */
export interface WebhookReportView {
  lastAttempt?: AttemptFacts;
  lastDelivery?: AttemptFacts;
  lastFailure?: AttemptFacts;
  /** Events waiting for their first attempt (the outbox). */
  waiting: number;
  /** Events waiting for a retry, and when the earliest is due. */
  retries: { count: number; nextDueAt?: string };
  /** Events dropped after their last attempt (while this report lived). */
  exhausted: number;
  retryNow?: { at: string; count: number };
}

export interface BrokerReportView {
  lastErrorAt?: string;
  lastError?: string;
  /** Failed publishes recorded while this report lived. */
  failures: number;
}

/** The answer of {@link WebhookReport.retryNow}. */
export type RetryNowResult =
  | { kind: 'no_webhook' }
  | {
      kind: 'done';
      /** Events waiting for a retry. */ waiting: number;
      /** Of those, not due before. */ madeDue: number;
    };

const RECORD = storeScript<number>('webhook-report-record-3');
const RETRY_NOW = storeScript<[number, number]>('webhook-retry-now-3');
const BROKER_FAILURE = storeScript<number>('broker-failure-record-1');

/** A failure kept shorter than this: enough to say what went wrong. */
const ERROR_MAX = 300;

function parse(raw: string | undefined): AttemptFacts | undefined {
  if (!raw) return undefined;
  try {
    return JSON.parse(raw) as AttemptFacts;
  } catch {
    return undefined;
  }
}

export class WebhookReport {
  constructor(private readonly redis: RedisClient) {}

  /**
   * Records an attempt's end under the delivery lease `token` (fenced) while the endpoint exists.
   * False when nothing was written.
   */
  async record(deviceId: string, token: string, facts: AttemptFacts): Promise<boolean> {
    const k = webhookDeliveryKeys(deviceId);
    const { owner, epoch } = leaseHolder('token', token);
    const kind =
      facts.outcome === 'delivered' ? 'delivered' : facts.outcome === 'dropped' ? 'other' : 'failed';
    const written = await RECORD.run(
      this.redis,
      [k.lease, keys.webhook(deviceId), webhookReportKey(deviceId)],
      [
        owner,
        epoch,
        JSON.stringify({ ...facts, ...(facts.error ? { error: facts.error.slice(0, ERROR_MAX) } : {}) }),
        kind,
        facts.outcome === 'exhausted' ? '1' : '0',
        REPORT_TTL_SECONDS,
      ],
    );
    return written === 1;
  }

  /** The report with the delivery state beside it (outbox length, retries, the earliest due). */
  async read(deviceId: string): Promise<WebhookReportView> {
    const k = webhookDeliveryKeys(deviceId);
    const [h, waiting, count, first] = await Promise.all([
      this.redis.hgetall(webhookReportKey(deviceId)),
      this.redis.xlen(k.outbox),
      this.redis.zcard(k.retries),
      this.redis.zrange(k.retries, 0, 0, 'WITHSCORES'),
    ]);
    const lastAttempt = parse(h.last);
    const lastDelivery = parse(h.delivered);
    const lastFailure = parse(h.failed);
    const nextDue = first[1] === undefined ? undefined : Number(first[1]);
    return {
      ...(lastAttempt ? { lastAttempt } : {}),
      ...(lastDelivery ? { lastDelivery } : {}),
      ...(lastFailure ? { lastFailure } : {}),
      waiting,
      retries: {
        count,
        ...(nextDue !== undefined && Number.isFinite(nextDue)
          ? { nextDueAt: new Date(nextDue).toISOString() }
          : {}),
      },
      exhausted: Number(h.exhausted ?? 0),
      ...(h.retryNowAt ? { retryNow: { at: h.retryNowAt, count: Number(h.retryNowCount ?? 0) } } : {}),
    };
  }

  /**
   * Makes the device's waiting retries due now, in their order (lua/webhook-retry-now-3.lua), and
   * tells the notifiers (the webhooks channel: the one serving the device reads its retries
   * again, or one takes the device up). They are then delivered as usual, one at a time.
   */
  async retryNow(deviceId: string, now = new Date()): Promise<RetryNowResult> {
    const k = webhookDeliveryKeys(deviceId);
    const [waiting, madeDue] = await RETRY_NOW.run(
      this.redis,
      [k.retries, keys.webhook(deviceId), webhookReportKey(deviceId)],
      [now.getTime(), now.toISOString(), REPORT_TTL_SECONDS],
    );
    if (Number(waiting) < 0) return { kind: 'no_webhook' };
    if (Number(waiting) > 0) await this.redis.publish(keys.webhooksChannel(), deviceId);
    return { kind: 'done', waiting: Number(waiting), madeDue: Number(madeDue) };
  }

  /** Records a failed publish of the device's events to a broker transport. */
  async brokerFailed(deviceId: string, transport: string, error: string, at = new Date()): Promise<void> {
    await BROKER_FAILURE.run(
      this.redis,
      [brokerReportKey(deviceId, transport)],
      [at.toISOString(), error.slice(0, ERROR_MAX), REPORT_TTL_SECONDS],
    );
  }

  /**
   * When (ms) `transport` first ran on this install (its relay sets it at start), undefined when it
   * never did; read only (BrokerRelayState.startedAt sets it).
   */
  async brokerStartedAt(transport: string): Promise<number | undefined> {
    const raw = await this.redis.get(keys.brokerStart(transport));
    return raw && Number.isFinite(Number(raw)) ? Number(raw) : undefined;
  }

  async brokerReport(deviceId: string, transport: string): Promise<BrokerReportView> {
    const h = await this.redis.hgetall(brokerReportKey(deviceId, transport));
    return {
      ...(h.lastErrorAt ? { lastErrorAt: h.lastErrorAt } : {}),
      ...(h.lastError ? { lastError: h.lastError } : {}),
      failures: Number(h.failures ?? 0),
    };
  }
}
