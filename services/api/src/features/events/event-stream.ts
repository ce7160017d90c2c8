/**
 * One event stream (event-streams.ts holds the open ones): it reads its devices' logs after
 * its cursors and writes them to its output — the contract below, which SSE (sse-output.ts) and the
 * WebSocket (event-socket.ts) fulfil — only while the socket takes what it writes, and it is cut
 * when its reader stops taking it.
 */
import type { EventEmitter } from 'node:events';
import { serializeError, type Logger } from '@mgw/common';
import type { EventType, Metrics } from '@mgw/contracts';
import type { LoggedEvent } from '@mgw/store';
import type { EventStreamConfig } from '../../config.js';
import type { SharedLogReads } from './shared-log-reads.js';
import { traceStreamed } from './event-spans.js';

/** Events read per XRANGE of a stream. */
const PAGE = 100;
/** A cut stream's socket is destroyed after this if its end could not be flushed. */
export const END_GRACE_MS = 1000;

/**
 * Why the API ended a stream itself: the client did not keep up, the process stops, the log could
 * not be read, or (WebSocket) the peer stopped answering pings.
 */
export type CutReason = 'slow_reader' | 'shutdown' | 'error' | 'dead_peer';

/** What carries a stream to its client: an SSE response, a WebSocket. */
export interface StreamOutput {
  readonly transport: 'sse' | 'websocket';
  /** Emits `drain` when its socket took what waited, `close` when the client went. */
  readonly emitter: EventEmitter;
  /** Starts the stream (headers, the upgrade): called once the stream's cursor is taken. */
  begin(): void;
  /** A page of `deviceId`'s events, in order (one write where the transport allows). */
  events(deviceId: string, events: readonly LoggedEvent[]): void;
  /** The client's cursor is older than what `deviceId`'s log still holds. */
  truncated(deviceId: string, after: string): void;
  /** Every `keepAliveMs` while open; false: the peer is gone (cut as `dead_peer`). */
  keepAlive(): boolean;
  /** Bytes written that the client has not taken yet. */
  buffered(): number;
  /** The socket holds more than it wants (Node's `writableNeedDrain`): a `drain` will follow. */
  full(): boolean;
  /** Ends the stream from this side, naming why if the client can still be told. */
  end(reason: CutReason): void;
  /** The client is gone already (it may have gone before its `close` could be heard). */
  gone(): boolean;
}

/** One client's stream: its cursors, its reads and writes while the socket keeps up, its end. */
export class EventStream {
  /** Each device's cursor: the last entry of its log this stream has looked at. */
  private readonly cursors = new Map<string, string>();
  /** Devices whose log may hold more than their cursor. */
  private readonly dirty = new Set<string>();
  /** Every device: the cursor a device not seen yet starts after (the stream's start). */
  private startAll: string | undefined;
  /** Every device, before its start is known: the devices woken meanwhile. */
  private readonly early = new Set<string>();
  /** The client gave a cursor: a log that no longer holds it is announced (`truncated`). */
  private resumed = false;
  private started = false;
  private ended = false;
  private pumping = false;
  private keepAlive: NodeJS.Timeout | undefined;
  private readonly onClose = () => this.finish();

  constructor(
    private readonly deps: {
      reads: SharedLogReads;
      logger: Logger;
      metrics: Metrics;
      config: EventStreamConfig;
    },
    private readonly output: StreamOutput,
    private readonly types: readonly EventType[] | undefined,
    private readonly onEnd: () => void,
    /**
     * A stream of every device: the devices whose events it may send (a workspace's console: its
     * own, docs/workspaces.md "The console"); absent, every device. Asked each time a device's log
     * is to be read, so a device that changes hands is followed by its new owner's streams only.
     */
    private readonly only?: (deviceId: string) => Promise<boolean>,
  ) {
    output.emitter.on('close', this.onClose);
  }

  get transport(): StreamOutput['transport'] {
    return this.output.transport;
  }

  startOne(deviceId: string, cursor: string, resumed: boolean): void {
    this.cursors.set(deviceId, cursor);
    this.dirty.add(deviceId);
    this.resumed = resumed;
  }

  /** Every device, after `cursor` (the stream's start): those woken while it was taken included. */
  startEvery(cursor: string): void {
    this.startAll = cursor;
    for (const deviceId of this.early) {
      this.cursors.set(deviceId, cursor);
      this.dirty.add(deviceId);
    }
    this.early.clear();
  }

  /** The cursor could not be taken: nothing was begun; the stream just goes. */
  abandon(): void {
    this.finish();
  }

  begin(): void {
    // A client that went while it was authenticated or its cursor taken: nothing to begin.
    if (!this.ended && this.output.gone()) this.finish();
    if (this.ended) return;
    this.started = true;
    this.output.begin();
    this.keepAlive = setInterval(() => {
      if (this.ended) return;
      if (!this.output.keepAlive()) this.cut('dead_peer');
    }, this.deps.config.keepAliveMs);
    this.keepAlive.unref();
    this.wake();
  }

  /** The log of `deviceId` (of every device it follows, when absent) grew, or may have. */
  wake(deviceId?: string): void {
    if (this.ended) return;
    if (deviceId === undefined) this.cursors.forEach((_c, d) => this.dirty.add(d));
    else if (this.cursors.has(deviceId)) this.dirty.add(deviceId);
    else if (this.startAll !== undefined) {
      this.cursors.set(deviceId, this.startAll);
      this.dirty.add(deviceId);
    } else {
      this.early.add(deviceId);
      return;
    }
    if (!this.started || this.pumping) return;
    this.pumping = true;
    void this.pump().finally(() => (this.pumping = false));
  }

  private async pump(): Promise<void> {
    try {
      while (this.dirty.size > 0 && !this.ended) {
        const deviceId = this.dirty.values().next().value as string;
        this.dirty.delete(deviceId);
        if (!(await this.drainDevice(deviceId))) return;
      }
    } catch (err) {
      this.fail(err);
    }
  }

  /** Sends `deviceId`'s events after its cursor; false when the stream ended meanwhile. */
  private async drainDevice(deviceId: string): Promise<boolean> {
    if (this.only && !(await this.only(deviceId))) return !this.ended;
    for (;;) {
      const from = this.cursors.get(deviceId)!;
      const page = await this.deps.reads.read(deviceId, {
        after: from,
        limit: PAGE,
        ...(this.types ? { types: this.types } : {}),
      });
      if (this.ended) return false;
      // The client's cursor is older than the log: said once, as an event of its own type.
      if (page.truncated && this.resumed) this.output.truncated(deviceId, from);
      // The page in one go (one write on SSE), then the socket's bound.
      if (page.events.length) {
        this.output.events(deviceId, page.events);
        traceStreamed(deviceId, page.events, this.output.transport);
        this.cursors.set(deviceId, page.events.at(-1)!.cursor);
        if (!(await this.keptUp())) return false;
      }
      if (this.ended) return false;
      const next = page.nextCursor ?? from;
      this.cursors.set(deviceId, next);
      // Done when the cursor stood still; without a filter, a short page is the end too.
      if (next === from || (!this.types && page.events.length < PAGE)) return true;
    }
  }

  /**
   * After a write: while the socket holds more than `maxBufferedBytes`, nothing more is read or
   * written until it has taken it all (`drain`); false (and the reader cut) after `stallMs`.
   */
  private async keptUp(): Promise<boolean> {
    if (!this.output.full() || this.output.buffered() <= this.deps.config.maxBufferedBytes) return true;
    return this.drained();
  }

  /** Waits for the socket to take what waits; false (and the reader cut) after `stallMs`. */
  private drained(): Promise<boolean> {
    const { emitter } = this.output;
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        emitter.off('drain', onDrain);
        emitter.off('close', onClose);
        resolve(ok && !this.ended);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      const timer = setTimeout(() => {
        this.cut('slow_reader');
        done(false);
      }, this.deps.config.stallMs);
      emitter.on('drain', onDrain);
      emitter.on('close', onClose);
    });
  }

  private fail(err: unknown): void {
    if (this.ended) return;
    this.deps.logger.warn('event stream ended: its log could not be read', {
      devices: [...this.cursors.keys()].slice(0, 10),
      err: serializeError(err),
    });
    this.cut('error');
  }

  /** Ends the stream from this side: the output says why (if its client can still hear it), then ends. */
  cut(reason: CutReason): void {
    if (this.ended) return;
    this.deps.metrics.eventStreamsCut.inc({ reason, transport: this.output.transport });
    this.finish();
    this.output.end(reason);
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.keepAlive);
    this.output.emitter.off('close', this.onClose);
    this.onEnd();
  }
}
