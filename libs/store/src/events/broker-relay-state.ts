import type { RedisClient } from '@mgw/common';
import { keys, type EventType } from '@mgw/contracts';
import { FencedLeases, type HeldLease } from '../coordination/lease.js';
import { SealedValueError, type SealedValueProblem } from '../encryption/encryption.js';
import type { Sealer } from '../encryption/sealer.js';
import { storeScript } from '../lua.js';
import { eventSealContext } from './event-publish.js';
import { compareStreamIds } from './event-log.js';

/**
 * What the broker relay (services/notifier/src/brokers/) keeps in Redis: per (transport, device)
 * a cursor in the device's event log and a lease with fencing.
 *
 * The event log (`keys.eventLog`, written by `mgw_emit` in the same script as the change each
 * event reports) is the relay's durable outbox: the relay reads it after its cursor, publishes,
 * and moves the cursor on only once the broker confirmed (`advance`, fenced by the lease). A
 * broker that is down or refuses leaves the cursor where it is: the events wait in the log, for
 * as long as the log keeps them (EVENT_LOG_RETENTION_HOURS, EVENT_LOG_MAX_EVENTS).
 *
 * The cursor holds the stream entry id and its ordinal in the log's whole history (XINFO STREAM's
 * `entries-added` counts every entry ever added; the log only ever loses entries from its head,
 * by MAXLEN and MINID trims, so the entry at ordinal n is the n-th added): when the log dropped
 * entries the relay had not published yet, their number is exact (`RelayPage.lost`).
 */

/** How far a transport has published a device's log. */
export interface BrokerCursor {
  /** The last stream entry id published (or passed over: filtered out, older than the transport). */
  id: string;
  /** Its ordinal in the log's history (1 = the first entry ever added). */
  ord: number;
}

/** One event of the log, opened (the data as a webhook receives it). */
export interface RelayEvent {
  cursor: BrokerCursor;
  id: string;
  type: EventType;
  timestamp: string;
  /** The event's data as JSON text, opened (what a webhook's body holds under `data`). */
  dataJson: string;
  /**
   * Set when the event's sealed data cannot be opened (a key dropped from the keyring before
   * `reencrypt` finished, or tampering): `dataJson` is empty and the event cannot be published.
   */
  unreadable?: SealedValueProblem;
  /** The W3C traceparent of the message it is about (tracing on): its publish joins that trace. */
  traceparent?: string;
}

export interface RelayPage {
  /** The entries after the cursor, oldest first (every one: filtering is the caller's). */
  events: RelayEvent[];
  /** Events the log dropped (retention, count bound) before this transport published them. */
  lost: number;
  /** Entries left in the log after this page. */
  backlog: number;
}

const ADVANCE = storeScript<number>('broker-cursor-advance-2');

type StreamEntry = [string, string[]];

export class BrokerRelayState {
  private readonly leases: FencedLeases;

  constructor(
    private readonly redis: RedisClient,
    private readonly sealer: Sealer,
    readonly transport: string,
    /** How long a take or an advance keeps the lease. */
    readonly leaseTtlMs: number,
  ) {
    this.leases = new FencedLeases(redis, {
      keys: (deviceId) => {
        const lease = keys.brokerLease(deviceId, transport);
        return { lease, fence: keys.brokerFence(deviceId, transport), reservation: `${lease}:reserved` };
      },
      form: 'token',
      ttlMs: leaseTtlMs,
    });
  }

  /**
   * When (ms) this transport started on the install (set the first time it is asked): a device
   * without a cursor publishes from then on.
   */
  async startedAt(now = Date.now()): Promise<number> {
    const key = keys.brokerStart(this.transport);
    await this.redis.set(key, String(now), 'NX');
    return Number(await this.redis.get(key));
  }

  /** Takes the device's lease for `owner` when nobody holds it. */
  acquire(deviceId: string, owner: string): Promise<HeldLease | undefined> {
    return this.leases.acquire(deviceId, owner);
  }

  /** Gives the lease back (when still `lease`'s). */
  release(lease: HeldLease): Promise<boolean> {
    return this.leases.release(lease);
  }

  /** Extends the lease; false when it is no longer `lease`'s. */
  async renew(lease: HeldLease): Promise<boolean> {
    return (await this.leases.renew(lease)) === 'renewed';
  }

  async cursor(deviceId: string): Promise<BrokerCursor | undefined> {
    const h = await this.redis.hgetall(keys.brokerCursor(deviceId, this.transport));
    const ord = Number(h.ord);
    return h.id && Number.isInteger(ord) ? { id: h.id, ord } : undefined;
  }

  /** Moves the cursor on under `lease` (and extends it); false when the lease is lost. */
  async advance(lease: HeldLease, to: BrokerCursor): Promise<boolean> {
    const r = await ADVANCE.run(
      this.redis,
      [keys.brokerLease(lease.id, this.transport), keys.brokerCursor(lease.id, this.transport)],
      [lease.owner, lease.epoch, this.leaseTtlMs, to.id, String(to.ord)],
    );
    return r === 1;
  }

  /**
   * Up to `limit` entries of the device's log after `after` (from its first entry without it),
   * with the count of entries it dropped unpublished and of those left after the page.
   */
  async read(deviceId: string, after: BrokerCursor | undefined, limit: number): Promise<RelayPage> {
    const key = keys.eventLog(deviceId);
    const info = await this.streamInfo(key);
    if (!info) return { events: [], lost: 0, backlog: 0 };
    // Ordinals 1..headGone were trimmed (the log only loses entries from its head).
    const headGone = info.added - info.length;
    let start = '-';
    let ord = headGone;
    let lost = 0;
    if (after) {
      const beforeFirst = info.firstId !== undefined && compareStreamIds(after.id, info.firstId) < 0;
      if (after.ord > info.added || (beforeFirst && headGone <= after.ord)) {
        // The log was removed and written anew since (its history restarted): from its first entry.
      } else if (headGone > after.ord) {
        // Entries after the cursor were trimmed before they were published. (Ordinals, not
        // XINFO's max-deleted-entry-id: Redis 7.0 moves that on XDEL only, not on trims.)
        lost = headGone - after.ord;
      } else {
        start = `(${after.id}`;
        ord = after.ord;
      }
    }
    const entries = (await this.redis.xrange(key, start, '+', 'COUNT', limit)) as StreamEntry[];
    const events = entries.map(([entryId, fields], i) =>
      this.toEvent(deviceId, { id: entryId, ord: ord + i + 1 }, fieldMap(fields)),
    );
    const lastOrd = ord + entries.length;
    return { events, lost, backlog: Math.max(0, info.added - lastOrd) };
  }

  private async streamInfo(
    key: string,
  ): Promise<{ length: number; added: number; firstId?: string } | undefined> {
    let info: unknown[];
    try {
      info = (await this.redis.xinfo('STREAM', key)) as unknown[];
    } catch (err) {
      if (err instanceof Error && /no such key/i.test(err.message)) return undefined;
      throw err;
    }
    const field = (name: string) => {
      const i = info.indexOf(name);
      return i >= 0 ? info[i + 1] : undefined;
    };
    const first = field('first-entry') as StreamEntry | null | undefined;
    return {
      length: Number(field('length') ?? 0),
      added: Number(field('entries-added') ?? 0),
      ...(first ? { firstId: first[0] } : {}),
    };
  }

  private toEvent(deviceId: string, cursor: BrokerCursor, f: Record<string, string>): RelayEvent {
    const id = f.id ?? '';
    const raw = f.data ?? '{}';
    const event: RelayEvent = {
      cursor,
      id,
      type: f.type as EventType,
      timestamp: f.ts ?? '',
      dataJson: raw,
      ...(f.tp ? { traceparent: f.tp } : {}),
    };
    if (f.sealed !== '1') return event;
    try {
      return { ...event, dataJson: this.sealer.openText(raw, eventSealContext(deviceId, id)) };
    } catch (err) {
      // One event that will never open must not hold back every event after it.
      if (err instanceof SealedValueError) return { ...event, dataJson: '', unreadable: err.problem };
      throw err;
    }
  }
}

function fieldMap(fields: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) out[fields[i]!] = fields[i + 1]!;
  return out;
}
