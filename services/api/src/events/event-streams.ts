import type { EventEmitter } from 'node:events';
import type { Response } from 'express';
import { Subscription, serializeError, type Logger, type RedisClient } from '@mgw/common';
import { keys, type EventType, type Metrics } from '@mgw/contracts';
import type { EventLog, LoggedEvent } from '@mgw/store';
import type { EventStreamConfig } from '../config.js';
import { SharedLogReads } from './shared-log-reads.js';

/**
 * The open event streams of this API process, and the one subscription that tells them the log
 * grew. A stream is the same engine whatever carries it: Server-Sent Events (`GET /events/stream`,
 * {@link SseOutput} below; the dashboard's `GET /api/admin/v1/events/stream` too) or a WebSocket
 * (`GET /events/ws`, events/event-socket.ts). One per-token count covers them all.
 *
 * `mgw_emit` publishes the device id on `keys.eventLogChannel()` with every event it appends. One
 * subscriber per process hears it and wakes that device's streams (and the streams of every
 * device); each stream then reads the log after its own cursor through {@link EventLog.read}
 * (XRANGE, a page at a time), so what a stream sends is the log itself: in order, each event once,
 * whether a publication was missed or not. A missed publication (the subscription lost and back)
 * wakes every stream. Nothing polls Redis.
 *
 * A stream reads only while its socket takes what it writes: when more than `maxBufferedBytes`
 * wait in it, it stops (no reads, no writes) until the socket has taken them all (`drain`). A
 * reader that keeps it so longer than `stallMs` is cut (reason `slow_reader`): it never holds
 * Redis, memory beyond its bound and one page, or the other streams.
 *
 * A publication wakes the device's streams WAKE_BATCH_MS later, together: the appends of that
 * moment go out as one read and one write per stream, and the streams that stand at the same
 * cursor share that read ({@link SharedLogReads}: one XRANGE, each sealed event opened once) and
 * each event's encoding, so a device read by many streams costs about what one costs.
 */

/** Events read per XRANGE of a stream. */
const PAGE = 100;
/** A client that lost its stream waits this long before reconnecting (the SSE `retry:` hint). */
const RETRY_MS = 3000;
/**
 * How long a publication waits before its device's streams read: appends within it go out in one
 * read and one write per stream (under load), for at most this much latency.
 */
const WAKE_BATCH_MS = 50;
/** A cut stream's socket is destroyed after this if its end could not be flushed. */
export const END_GRACE_MS = 1000;
/** The greatest sequence part of a stream entry id: `<ms - 1>-MAX_SEQ` is "from `<ms>` on". */
const MAX_SEQ = '18446744073709551615';

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

export interface OpenOptions {
  /** What the per-token limit counts under: the API token's hash, or an admin session's key. */
  key: string;
  /** One device (its log, resumable by cursor), or every device (live from now). */
  devices: { one: string } | 'all';
  /** Resume after this cursor (one device only); from the newest event now when absent. */
  after?: string;
  types?: readonly EventType[];
}

export class EventStreams {
  private readonly byDevice = new Map<string, Set<EventStream>>();
  /** Streams of every device (the dashboard's): woken by any device's publication. */
  private readonly everyDevice = new Set<EventStream>();
  private readonly perKey = new Map<string, number>();
  private subscription?: Subscription;
  private closed = false;
  private readonly reads: SharedLogReads;
  private readonly pendingWakes = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly deps: {
      eventLog: EventLog;
      subscriber: RedisClient;
      /** Redis TIME, for the start of a stream of every device. */
      redis: RedisClient;
      logger: Logger;
      metrics: Metrics;
      config: EventStreamConfig;
    },
  ) {
    this.reads = new SharedLogReads(deps.eventLog);
  }

  /** Subscribes to the log channel (resolves on its first confirmation). */
  start(): Promise<void> {
    this.subscription = new Subscription({
      client: this.deps.subscriber,
      channels: [keys.eventLogChannel()],
      onMessage: (_channel, deviceId) => this.grew(deviceId),
      // Publications were missed while away: every stream reads its logs again.
      onSubscribed: () => {
        this.reads.mayHaveGrown();
        this.all().forEach((s) => s.wake());
      },
      logger: this.deps.logger,
      gauge: this.deps.metrics.redisSubscribed,
    });
    return this.subscription.start();
  }

  /** A device's log grew: its streams (and those of every device) wake WAKE_BATCH_MS later, together. */
  private grew(deviceId: string): void {
    if (this.pendingWakes.has(deviceId)) return;
    if (!this.byDevice.has(deviceId) && this.everyDevice.size === 0) return;
    const timer = setTimeout(() => {
      this.pendingWakes.delete(deviceId);
      this.reads.grew(deviceId);
      this.byDevice.get(deviceId)?.forEach((s) => s.wake(deviceId));
      this.everyDevice.forEach((s) => s.wake(deviceId));
    }, WAKE_BATCH_MS);
    this.pendingWakes.set(deviceId, timer);
  }

  private all(): EventStream[] {
    return [...[...this.byDevice.values()].flatMap((set) => [...set]), ...this.everyDevice];
  }

  /** False when the key already holds its share: the caller answers 429 before streaming. */
  canOpen(key: string): boolean {
    return !this.closed && (this.perKey.get(key) ?? 0) < this.deps.config.perToken;
  }

  /**
   * Streams the log on `output` after `after` (from the newest event now when absent), then live,
   * until the client goes, the reader is cut, or the process stops. The stream is registered and
   * its cursor taken before `output.begin()`: once the client sees the stream open, every later
   * event reaches it. Rejects (nothing begun, nothing counted) when the cursor cannot be taken.
   */
  async open(output: StreamOutput, o: OpenOptions): Promise<void> {
    const stream = new EventStream({ ...this.deps, reads: this.reads }, output, o.types, () =>
      this.forget(stream, o.key),
    );
    this.perKey.set(o.key, (this.perKey.get(o.key) ?? 0) + 1);
    if (o.devices === 'all') this.everyDevice.add(stream);
    else {
      let set = this.byDevice.get(o.devices.one);
      if (!set) this.byDevice.set(o.devices.one, (set = new Set()));
      set.add(stream);
    }
    this.deps.metrics.eventStreamsOpen.inc({ transport: output.transport });
    try {
      // Registered before the cursor is taken: an event appended meanwhile wakes it.
      if (o.devices === 'all') {
        const [seconds, micros] = await this.deps.redis.time();
        stream.startEvery(`${Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) - 1}-${MAX_SEQ}`);
      } else {
        const deviceId = o.devices.one;
        stream.startOne(deviceId, o.after ?? (await this.deps.eventLog.last(deviceId)) ?? '0-0', !!o.after);
      }
    } catch (err) {
      stream.abandon();
      throw err;
    }
    stream.begin();
  }

  private forget(stream: EventStream, key: string): void {
    let known = this.everyDevice.delete(stream);
    for (const [deviceId, set] of this.byDevice) {
      if (!set.delete(stream)) continue;
      known = true;
      if (set.size === 0) this.byDevice.delete(deviceId);
    }
    if (this.everyDevice.size === 0)
      for (const deviceId of this.reads.devices())
        if (!this.byDevice.has(deviceId)) this.reads.forget(deviceId);
    if (!known) return;
    const left = (this.perKey.get(key) ?? 1) - 1;
    if (left > 0) this.perKey.set(key, left);
    else this.perKey.delete(key);
    this.deps.metrics.eventStreamsOpen.dec({ transport: stream.transport });
  }

  /** Ends every stream (their clients reconnect elsewhere and resume) and unsubscribes. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.pendingWakes.forEach((timer) => clearTimeout(timer));
    this.pendingWakes.clear();
    this.all().forEach((s) => s.cut('shutdown'));
    await this.subscription?.stop();
  }
}

class EventStream {
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
      eventLog: EventLog;
      reads: SharedLogReads;
      logger: Logger;
      metrics: Metrics;
      config: EventStreamConfig;
    },
    private readonly output: StreamOutput,
    private readonly types: readonly EventType[] | undefined,
    private readonly onEnd: () => void,
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

/** SSE frames of the events that streams share (a read shared by SharedLogReads), by event. */
const SSE_FRAMES = new WeakMap<LoggedEvent, string>();

/**
 * A stream as Server-Sent Events on an HTTP response: `id:` the event's cursor, `event:` its type,
 * `data:` the GET /events envelope (with `deviceId` when the stream follows every device).
 */
export class SseOutput implements StreamOutput {
  readonly transport = 'sse';

  constructor(
    private readonly res: Response,
    private readonly o: { withDevice?: boolean } = {},
  ) {}

  get emitter(): EventEmitter {
    return this.res;
  }

  begin(): void {
    const { res } = this;
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache, no-store');
    res.setHeader('Connection', 'keep-alive');
    // nginx and its kind would otherwise buffer the stream.
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    this.write(`retry: ${RETRY_MS}\n\n`);
  }

  events(deviceId: string, events: readonly LoggedEvent[]): void {
    this.write(events.map((e) => this.frame(deviceId, e)).join(''));
  }

  /** An event's frame; without the device id (a device's own stream), encoded once for all streams. */
  private frame(deviceId: string, e: LoggedEvent): string {
    const shared = !this.o.withDevice;
    let frame = shared ? SSE_FRAMES.get(e) : undefined;
    if (frame === undefined) {
      const data = JSON.stringify({
        ...(shared ? {} : { deviceId }),
        id: e.id,
        type: e.type,
        timestamp: e.timestamp,
        data: e.data,
      });
      frame = `id: ${e.cursor}\nevent: ${e.type}\ndata: ${data}\n\n`;
      if (shared) SSE_FRAMES.set(e, frame);
    }
    return frame;
  }

  truncated(deviceId: string, after: string): void {
    const data = JSON.stringify({ ...(this.o.withDevice ? { deviceId } : {}), after });
    this.write(`event: truncated\ndata: ${data}\n\n`);
  }

  keepAlive(): boolean {
    // A full socket already has bytes on their way; adding more would only grow its buffer.
    if (!this.res.writableNeedDrain) this.write(': keep-alive\n\n');
    // A peer that went is seen by the socket (`close`): SSE has no ping to wait for.
    return true;
  }

  buffered(): number {
    return this.res.writableLength;
  }

  full(): boolean {
    return this.res.writableNeedDrain;
  }

  gone(): boolean {
    return !this.res.socket || this.res.socket.destroyed;
  }

  end(reason: CutReason): void {
    const { res } = this;
    if (reason !== 'shutdown' && reason !== 'dead_peer')
      this.write(`event: error\ndata: ${JSON.stringify({ reason })}\n\n`);
    res.end();
    // A reader that does not read never takes the end either: its socket goes.
    const socket = res.socket;
    if (reason === 'slow_reader' && socket && !socket.destroyed)
      setTimeout(() => socket.destroy(), END_GRACE_MS).unref();
  }

  private write(text: string): void {
    if (!this.res.writableEnded) this.res.write(text);
  }
}
