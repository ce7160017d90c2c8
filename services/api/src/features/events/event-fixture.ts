import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { createLogger } from '@mgw/common';
import type { EventType } from '@mgw/contracts';
import type { EventLogPage, EventLogQuery, LoggedEvent } from '@mgw/store';
import type { CutReason, StreamOutput } from './event-stream.js';

/**
 * TEST SUPPORT, not used by the API (left out of the build): what the events' fast tests
 * (`<use-case>.test.ts` beside each) share — devices' event logs and a stream's output in memory,
 * a silent logger and the streams' bounds.
 */

/** Devices' event logs in memory, read as EventLog reads them (after a cursor, a page at a time, by type). */
export class MemoryLog {
  readonly logs = new Map<string, LoggedEvent[]>();
  reads = 0;
  /** A read that waits until the test lets it answer (none: answers at once). */
  gate?: Promise<void>;
  private seq = 0;

  append(deviceId: string, type: EventType = 'session.status', data: unknown = {}): LoggedEvent {
    const cursor = `${++this.seq}-0`;
    const event = { cursor, id: `ev-${this.seq}`, type, timestamp: new Date().toISOString(), data };
    this.logs.set(deviceId, [...(this.logs.get(deviceId) ?? []), event]);
    return event;
  }
  async read(deviceId: string, q: EventLogQuery): Promise<EventLogPage> {
    this.reads++;
    await this.gate;
    const after = Number((q.after ?? '0-0').split('-')[0]);
    const newer = (this.logs.get(deviceId) ?? []).filter((e) => Number(e.cursor.split('-')[0]) > after);
    const looked = newer.slice(0, q.limit);
    const events = looked.filter((e) => !q.types || q.types.includes(e.type));
    return { events, nextCursor: looked.at(-1)?.cursor ?? null };
  }
  async last(deviceId: string): Promise<string | undefined> {
    return this.logs.get(deviceId)?.at(-1)?.cursor;
  }
}

/** A stream's output in memory: what it was sent, and its socket as full or gone as the test says. */
export class MemoryOutput implements StreamOutput {
  readonly transport = 'sse' as const;
  readonly emitter = new EventEmitter();
  readonly written: [string, string[]][] = [];
  began = false;
  ended?: CutReason;
  isGone = false;
  pending = 0;
  begin() {
    this.began = true;
  }
  events(deviceId: string, events: readonly LoggedEvent[]) {
    this.written.push([deviceId, events.map((e) => e.id)]);
  }
  truncated(deviceId: string, after: string) {
    this.written.push([deviceId, [`truncated after ${after}`]]);
  }
  keepAlive() {
    return !this.isGone;
  }
  buffered() {
    return this.pending;
  }
  full() {
    return this.pending > 0;
  }
  end(reason: CutReason) {
    this.ended = reason;
  }
  gone() {
    return this.isGone;
  }
}

/** Lets what was woken run (the reads, the writes). */
export const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

/** A logger that says nothing. */
export const quietLogger = () =>
  createLogger({ level: 'silent', service: 'events-test', stream: new PassThrough() });

/** The streams' bounds: two per key, a stall of 30 ms. */
export const config = { perToken: 2, keepAliveMs: 60_000, maxBufferedBytes: 100, stallMs: 30 };
