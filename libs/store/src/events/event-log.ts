import type { RedisClient } from '@mgw/common';
import { keys, type EventType } from '@mgw/contracts';
import { SealedValueError, type SealedValueProblem } from '../encryption/encryption.js';
import type { Sealer } from '../encryption/sealer.js';
import { eventSealContext } from './event-publish.js';

/**
 * The event log: every event of a device, whether its webhook wants it or not, in emission order,
 * read by GET /events.
 *
 * `mgw_emit` (lua/includes/event-emit.lua) appends each event to the device's log stream
 * (`keys.eventLog`) in the script that makes the change it reports, with the outbox entry's
 * fields (`id`, `type`, `ts`, `data`, `sealed`): sealed data stays sealed at rest and is opened
 * only for an answer. The log is bounded twice: by count in the same XADD (`EVENT_LOG_MAX_EVENTS`,
 * approximate), and by age (`retentionMs`): {@link EventLog.trim} cuts entries older than the
 * window (`XTRIM MINID ~`, run by the API, see services/api/src/events/event-log-trimmer.ts), and
 * the reader skips the ones an approximate trim left.
 *
 * The cursor is the stream entry id (`<ms>-<seq>`): Redis makes it unique and increasing per
 * stream, so "after this id" is exact, costs one XRANGE, and survives trimming (a cursor whose
 * entry is gone still says where to go on from).
 */

/** One event of an answer: its cursor (the stream entry id), webhook id, type, time and data. */
export interface LoggedEvent {
  cursor: string;
  id: string;
  type: EventType;
  timestamp: string;
  data: unknown;
}

export interface EventLogPage {
  events: LoggedEvent[];
  /** What to pass as `after` next time: the last entry looked at (filtered out or not). */
  nextCursor: string | null;
  /**
   * Present when events after the cursor were lost to the reader: dropped (retention window or
   * count bound), or passed over because their sealed data cannot be opened.
   */
  truncated?: true;
}

/** Told of each event passed over because its sealed data cannot be opened (ids only). */
export type UnreadableEventHandler = (
  deviceId: string,
  event: { id: string; cursor: string; problem: SealedValueProblem },
) => void;

export interface EventLogQuery {
  /** A stream entry id (already checked against `EVENT_CURSOR_PATTERN`). */
  after?: string;
  /** Only these types (all when absent). */
  types?: readonly EventType[];
  limit: number;
}

/** Entries one read looks at, at most, when a type filter skips most of them. */
const SCAN_BUDGET = 10_000;
/** Entries read per XRANGE under a type filter. */
const FILTERED_CHUNK = 1000;

/** Compares two stream entry ids (`<ms>-<seq>`) numerically. */
export function compareStreamIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(BigInt) as [bigint, bigint];
  const [bm, bs] = b.split('-').map(BigInt) as [bigint, bigint];
  if (am !== bm) return am < bm ? -1 : 1;
  if (as !== bs) return as < bs ? -1 : 1;
  return 0;
}

type StreamEntry = [string, string[]];

export class EventLog {
  constructor(
    private readonly redis: RedisClient,
    private readonly sealer: Sealer,
    /** How long an event is kept (EVENT_LOG_RETENTION_HOURS). */
    readonly retentionMs: number,
    /** Told of each event passed over because it cannot be opened (the API logs it). */
    private readonly onUnreadable: UnreadableEventHandler = () => {},
  ) {}

  /** The first id still inside the retention window (entries below it are expired). */
  private floor(now: number): string {
    return `${Math.max(0, now - this.retentionMs)}-0`;
  }

  /**
   * Events of `deviceId` after `after` (from the oldest retained one without it), oldest first, at
   * most `limit`. A cursor older than what the log still holds (trimmed by age or count) answers
   * from the oldest retained event with `truncated`.
   */
  async read(deviceId: string, q: EventLogQuery, now = Date.now()): Promise<EventLogPage> {
    const key = keys.eventLog(deviceId);
    const floor = this.floor(now);
    let resume = q.after;
    let truncated = false;
    if (resume) {
      // Trimmed by count or by an earlier XTRIM: Redis remembers the greatest id it deleted.
      const maxDeleted = await this.maxDeletedId(key);
      if (maxDeleted && compareStreamIds(resume, maxDeleted) < 0) {
        truncated = true;
        resume = maxDeleted;
      }
      // Expired but not yet trimmed (the trim is approximate and periodic): skipped, and said so.
      if (compareStreamIds(resume, floor) < 0) {
        const expired = (await this.redis.xrevrange(
          key,
          `(${floor}`,
          `(${resume}`,
          'COUNT',
          1,
        )) as StreamEntry[];
        if (expired.length) {
          truncated = true;
          resume = expired[0]![0];
        }
      }
    }
    // After `resume` nothing is expired any more (it is past the floor, or the last expired entry).
    let start = resume ? `(${resume}` : floor;
    const wanted = q.types ? new Set<string>(q.types) : undefined;
    const events: LoggedEvent[] = [];
    let last: string | undefined;
    for (let scanned = 0; events.length < q.limit && scanned < SCAN_BUDGET;) {
      const count = wanted ? FILTERED_CHUNK : q.limit - events.length;
      const chunk = (await this.redis.xrange(key, start, '+', 'COUNT', count)) as StreamEntry[];
      for (const [entryId, fields] of chunk) {
        if (events.length >= q.limit) break;
        last = entryId;
        scanned++;
        const f = fieldMap(fields);
        if (wanted && !wanted.has(f.type ?? '')) continue;
        try {
          events.push(this.toEvent(deviceId, entryId, f));
        } catch (err) {
          // Sealed under a key no longer configured (or tampered): it will never open, and a
          // reader stopped at it could never read past it. Passed over, and said so.
          if (!(err instanceof SealedValueError)) throw err;
          truncated = true;
          this.onUnreadable(deviceId, { id: f.id ?? '', cursor: entryId, problem: err.problem });
        }
      }
      if (chunk.length < count) break;
      start = `(${last!}`;
    }
    const nextCursor = last ?? resume ?? null;
    return { events, nextCursor, ...(truncated ? { truncated: true as const } : {}) };
  }

  /**
   * The same log read backwards, for the operator's view (the dashboard's Events tab): events of
   * `deviceId` before `before` (from the newest without it), newest first, at most `limit`, within
   * the retention window. `olderCursor` is what to pass as `before` for the page after (the last
   * entry looked at), null once the window's oldest entry was reached. An event that cannot be
   * opened is passed over, as by {@link read}.
   */
  async readBack(
    deviceId: string,
    q: { before?: string; types?: readonly EventType[]; limit: number },
    now = Date.now(),
  ): Promise<{ events: LoggedEvent[]; olderCursor: string | null }> {
    const key = keys.eventLog(deviceId);
    const floor = this.floor(now);
    let end = q.before ? `(${q.before}` : '+';
    const wanted = q.types ? new Set<string>(q.types) : undefined;
    const events: LoggedEvent[] = [];
    let last: string | undefined;
    let reachedEnd = false;
    for (let scanned = 0; events.length < q.limit && scanned < SCAN_BUDGET;) {
      const count = wanted ? FILTERED_CHUNK : q.limit - events.length;
      const chunk = (await this.redis.xrevrange(key, end, floor, 'COUNT', count)) as StreamEntry[];
      for (const [entryId, fields] of chunk) {
        if (events.length >= q.limit) break;
        last = entryId;
        scanned++;
        const f = fieldMap(fields);
        if (wanted && !wanted.has(f.type ?? '')) continue;
        try {
          events.push(this.toEvent(deviceId, entryId, f));
        } catch (err) {
          if (!(err instanceof SealedValueError)) throw err;
          this.onUnreadable(deviceId, { id: f.id ?? '', cursor: entryId, problem: err.problem });
        }
      }
      if (chunk.length < count) {
        reachedEnd = true;
        break;
      }
      end = `(${last!}`;
    }
    return { events, olderCursor: reachedEnd || !last ? null : last };
  }

  /** The cursor of the device's newest event, or undefined when its log is empty (a live stream starts there). */
  async last(deviceId: string): Promise<string | undefined> {
    const newest = (await this.redis.xrevrange(
      keys.eventLog(deviceId),
      '+',
      '-',
      'COUNT',
      1,
    )) as StreamEntry[];
    return newest[0]?.[0];
  }

  /**
   * Cuts the entries older than the retention window from the logs of `deviceIds` (`XTRIM MINID ~`:
   * whole stream nodes, cheap; the reader skips what it leaves). One command per device, issued
   * together (auto-pipelined; each device's key is in its own slot on a cluster).
   */
  async trim(deviceIds: readonly string[], now = Date.now()): Promise<number> {
    const floor = this.floor(now);
    const removed = await Promise.all(
      deviceIds.map((d) => this.redis.xtrim(keys.eventLog(d), 'MINID', '~', floor)),
    );
    return removed.reduce((a, b) => a + Number(b), 0);
  }

  private async maxDeletedId(key: string): Promise<string | undefined> {
    let info: unknown[];
    try {
      info = (await this.redis.xinfo('STREAM', key)) as unknown[];
    } catch (err) {
      if (err instanceof Error && /no such key/i.test(err.message)) return undefined;
      throw err;
    }
    const i = info.indexOf('max-deleted-entry-id');
    const id = i >= 0 ? String(info[i + 1]) : undefined;
    return id && id !== '0-0' ? id : undefined;
  }

  private toEvent(deviceId: string, cursor: string, f: Record<string, string>): LoggedEvent {
    const id = f.id ?? '';
    const raw = f.data ?? '{}';
    const data = f.sealed === '1' ? this.sealer.openText(raw, eventSealContext(deviceId, id)) : raw;
    const event: LoggedEvent = {
      cursor,
      id,
      type: f.type as EventType,
      timestamp: f.ts ?? '',
      data: JSON.parse(data),
    };
    if (f.tp) TRACEPARENTS.set(event, f.tp);
    return event;
  }
}

/** Kept beside the event, not in it: what a client is given of an event is its contract's. */
const TRACEPARENTS = new WeakMap<LoggedEvent, string>();

/** The W3C traceparent of the message an event is about (tracing on: its `tp`), if any. */
export function eventTraceparent(event: LoggedEvent): string | undefined {
  return TRACEPARENTS.get(event);
}

function fieldMap(fields: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) out[fields[i]!] = fields[i + 1]!;
  return out;
}
