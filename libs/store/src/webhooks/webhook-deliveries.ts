import type { RedisClient } from '@mgw/common';
import { keys, type EventType, type WebhookJobData } from '@mgw/contracts';
import { FencedLeases, leaseHolder, type LeaseKeys } from '../coordination/lease.js';
import { storeScript } from '../lua.js';

/**
 * The delivery state of a device's webhook events, next to its outbox (every key carries the
 * `{deviceId}` tag, so each script below runs on one Redis Cluster slot):
 *
 * - the outbox stream (`keys.eventOutbox`) is the queue of first attempts, in emission order; an
 *   entry is deleted when its first attempt ends (delivered, dropped, or moved to the retries);
 * - `…:webhook:retries` (sorted set: event id → when it is due, ms) and `…:webhook:retry-data`
 *   (hash: event id → the event and its attempts so far) hold events waiting for another attempt;
 * - `…:webhook:lease` (string with a TTL) names the one notifier that delivers the device's events
 *   now, with a fencing token (`<notifier>:<n>`, n from the `…:webhook:fence` counter): the lease
 *   with fencing of `coordination/lease.ts` in its token form. Every write of a delivery's outcome
 *   checks the token, so a notifier that lost its lease (it paused past the TTL and another took
 *   over) changes nothing.
 *
 * A lease is taken only when the device has work (an outbox entry or a due retry) and given back
 * only when it has none, both checked in the same script as the lease: an event written between
 * "nothing left" and the release is never stranded without a notifier.
 */
export function webhookDeliveryKeys(deviceId: string) {
  const hook = keys.webhook(deviceId);
  return {
    outbox: keys.eventOutbox(deviceId),
    lease: `${hook}:lease`,
    fence: `${hook}:fence`,
    retries: `${hook}:retries`,
    retryData: `${hook}:retry-data`,
  };
}

/** One event to attempt: from the outbox (first attempt) or from the retries. */
export interface PendingDelivery {
  event: WebhookJobData;
  /** Attempts already made (0 for an outbox entry). */
  attemptsMade: number;
  /** The outbox entry's stream id; absent for a retry. */
  streamId?: string;
}

/** What ends an attempt: done (delivered, dropped, gone, exhausted) or another attempt at `dueMs`. */
export type DeliveryOutcome = { done: true } | { done: false; dueMs: number };

export type AcquireResult =
  { kind: 'acquired'; token: string } | { kind: 'held'; ttlMs: number } | { kind: 'idle' };

export type ReleaseResult = { kind: 'released'; nextRetryAt?: number } | { kind: 'busy' } | { kind: 'lost' };

/** Takes the lease when it is free and the device has work (see `lua/webhook-lease-acquire-4.lua`). */
const ACQUIRE = storeScript<[string, string | number]>('webhook-lease-acquire-4');
/** Gives the lease back when the device has no work left, or when forced. */
const RELEASE = storeScript<[string, string]>('webhook-lease-release-3');
/** Writes the end of an attempt under the lease (fenced) and extends the lease. */
const SETTLE = storeScript<number>('webhook-settle-4');

/** The delivery leases: @mgw/store's lease with fencing, in its token form. */
const leaseKeys = (deviceId: string): LeaseKeys => {
  const k = webhookDeliveryKeys(deviceId);
  // Never written: the notifier takes and gives back its leases by the webhook scripts (with the
  // work checks), which have no hand-over; FencedLeases only renews them.
  return { lease: k.lease, fence: k.fence, reservation: `${k.lease}:reserved` };
};

/** The (owner, epoch) a fencing token stands for. */
const holder = (token: string) => leaseHolder('token', token);

type StreamEntry = [id: string, fields: string[]];

/**
 * The Redis side of webhook deliveries with a per-device lease (see {@link webhookDeliveryKeys}).
 * The notifier holding a device's lease reads its outbox in order, attempts each event and
 * settles it here; only it writes the device's retries.
 */
export class WebhookDeliveries {
  constructor(private readonly redis: RedisClient) {}

  /** The device's lease, to renew it (its TTL is the caller's on each call). */
  private lease(ttlMs: number): FencedLeases {
    return new FencedLeases(this.redis, { keys: leaseKeys, form: 'token', ttlMs });
  }

  /** Takes the device's lease if it is free and the device has work. */
  async acquire(deviceId: string, owner: string, ttlMs: number, now = Date.now()): Promise<AcquireResult> {
    const k = webhookDeliveryKeys(deviceId);
    const [kind, value] = await ACQUIRE.run(
      this.redis,
      [k.lease, k.fence, k.outbox, k.retries],
      [owner, ttlMs, now],
    );
    if (kind === 'acquired') return { kind, token: String(value) };
    if (kind === 'held') return { kind, ttlMs: Number(value) };
    return { kind: 'idle' };
  }

  /** Extends the lease; false when it is not (or no longer) this token's. */
  async renew(deviceId: string, token: string, ttlMs: number): Promise<boolean> {
    return (await this.lease(ttlMs).extend({ id: deviceId, ...holder(token) })) === 'renewed';
  }

  /**
   * Gives the lease back when the device has no work left (`force`: in any case, e.g. at
   * shutdown). `nextRetryAt`: when its earliest retry is due, if it has one.
   */
  async release(deviceId: string, token: string, force = false, now = Date.now()): Promise<ReleaseResult> {
    const k = webhookDeliveryKeys(deviceId);
    const { owner, epoch } = holder(token);
    const [kind, next] = await RELEASE.run(
      this.redis,
      [k.lease, k.outbox, k.retries],
      [owner, epoch, now, force ? '1' : '0'],
    );
    if (kind === 'lost') return { kind };
    if (kind === 'busy') return { kind };
    return next ? { kind: 'released', nextRetryAt: Number(next) } : { kind: 'released' };
  }

  /** Outbox entries after `after` (a stream id, exclusive; '-' for the first), in order. */
  async readOutbox(deviceId: string, after: string, count: number): Promise<PendingDelivery[]> {
    const start = after === '-' ? '-' : `(${after}`;
    const entries = (await this.redis.xrange(
      keys.eventOutbox(deviceId),
      start,
      '+',
      'COUNT',
      count,
    )) as StreamEntry[];
    return entries.map(([streamId, fields]) => ({ event: eventOf(fields), attemptsMade: 0, streamId }));
  }

  /** Retries due at `now`, the earliest first. */
  async dueRetries(deviceId: string, count: number, now = Date.now()): Promise<PendingDelivery[]> {
    const k = webhookDeliveryKeys(deviceId);
    const ids = await this.redis.zrangebyscore(k.retries, '-inf', now, 'LIMIT', 0, count);
    if (ids.length === 0) return [];
    const records = await this.redis.hmget(k.retryData, ...ids);
    const out: PendingDelivery[] = [];
    for (const raw of records) {
      if (!raw) continue;
      out.push(JSON.parse(raw) as PendingDelivery);
    }
    return out;
  }

  /** When the device's earliest retry is due (ms), if it has one. */
  async nextRetryAt(deviceId: string): Promise<number | undefined> {
    const first = await this.redis.zrange(webhookDeliveryKeys(deviceId).retries, 0, 0, 'WITHSCORES');
    return first[1] === undefined ? undefined : Number(first[1]);
  }

  /**
   * Writes the end of an attempt under the lease: the outbox entry goes, and the event is either
   * done or due again at `outcome.dueMs` with one more attempt counted. Also extends the lease.
   * False when the lease is not this token's (nothing was written).
   */
  async settle(
    deviceId: string,
    token: string,
    ttlMs: number,
    delivery: PendingDelivery,
    outcome: DeliveryOutcome,
  ): Promise<boolean> {
    const k = webhookDeliveryKeys(deviceId);
    const next: PendingDelivery = { event: delivery.event, attemptsMade: delivery.attemptsMade + 1 };
    const { owner, epoch } = holder(token);
    const written = await SETTLE.run(
      this.redis,
      [k.lease, k.outbox, k.retries, k.retryData],
      [
        owner,
        epoch,
        ttlMs,
        delivery.streamId ?? '',
        delivery.event.id,
        outcome.done ? '' : Math.round(outcome.dueMs),
        outcome.done ? '' : JSON.stringify(next),
      ],
    );
    return written === 1;
  }

  /**
   * Puts an event among the retries, due at `dueMs`, with its attempts as they are (under the
   * lease: e.g. a job moved over from a legacy delivery queue). False when the lease is not this token's.
   */
  async schedule(
    deviceId: string,
    token: string,
    ttlMs: number,
    delivery: PendingDelivery,
    dueMs: number,
  ): Promise<boolean> {
    const k = webhookDeliveryKeys(deviceId);
    const record: PendingDelivery = { event: delivery.event, attemptsMade: delivery.attemptsMade };
    const { owner, epoch } = holder(token);
    const written = await SETTLE.run(
      this.redis,
      [k.lease, k.outbox, k.retries, k.retryData],
      [owner, epoch, ttlMs, '', delivery.event.id, Math.round(dueMs), JSON.stringify(record)],
    );
    return written === 1;
  }

  /** Events waiting for their first attempt and for a retry, over `deviceIds`. */
  async backlog(deviceIds: string[]): Promise<{ waiting: number; delayed: number }> {
    const counts = await Promise.all(
      deviceIds.map(async (d) => {
        const k = webhookDeliveryKeys(d);
        const [waiting, delayed] = await Promise.all([
          this.redis.xlen(k.outbox),
          this.redis.zcard(k.retries),
        ]);
        return { waiting, delayed };
      }),
    );
    return counts.reduce((a, c) => ({ waiting: a.waiting + c.waiting, delayed: a.delayed + c.delayed }), {
      waiting: 0,
      delayed: 0,
    });
  }
}

function eventOf(fields: string[]): WebhookJobData {
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
  return {
    id: f.id!,
    type: f.type as EventType,
    timestamp: f.ts!,
    data: f.data ?? '{}',
    ...(f.sealed === '1' ? { sealed: true } : {}),
    ...(f.tp ? { traceparent: f.tp } : {}),
  };
}
