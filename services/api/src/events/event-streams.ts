import type { Response } from 'express';
import { Subscription, serializeError, type Logger, type RedisClient } from '@mgw/common';
import { keys, type EventType, type Metrics } from '@mgw/contracts';
import type { EventLog, LoggedEvent } from '@mgw/store';
import type { EventStreamConfig } from '../config.js';

/**
 * The open event streams of this API process (GET /events/stream, Server-Sent Events of a
 * device's event log), and the one subscription that tells them the log grew.
 *
 * `mgw_emit` publishes the device id on `keys.eventLogChannel()` with every event it appends. One
 * subscriber per process hears it and wakes that device's streams; each stream then reads the log
 * after its own cursor through {@link EventLog.read} (XRANGE, a page at a time), so what a stream
 * sends is the log itself: in order, each event once, whether a publication was missed or not. A
 * missed publication (the subscription lost and back) wakes every stream. Nothing polls Redis.
 *
 * A stream reads only while its socket takes what it writes: when more than `maxBufferedBytes`
 * wait in it, it stops (no reads, no writes) until the socket has taken them all (`drain`). A
 * reader that keeps it so longer than `stallMs` is cut (`event: error`, reason `slow_reader`): it
 * never holds Redis, memory beyond its bound and one page, or the other streams.
 */

/** Events read per XRANGE of a stream. */
const PAGE = 100;
/** A client that lost its stream waits this long before reconnecting (the SSE `retry:` hint). */
const RETRY_MS = 3000;
/** A cut stream's socket is destroyed after this if its end could not be flushed. */
const END_GRACE_MS = 1000;

export type CutReason = 'slow_reader' | 'shutdown' | 'error';

export class EventStreams {
  private readonly byDevice = new Map<string, Set<EventStream>>();
  private readonly perToken = new Map<string, number>();
  private subscription?: Subscription;
  private closed = false;

  constructor(
    private readonly deps: {
      eventLog: EventLog;
      subscriber: RedisClient;
      logger: Logger;
      metrics: Metrics;
      config: EventStreamConfig;
    },
  ) {}

  /** Subscribes to the log channel (resolves on its first confirmation). */
  start(): Promise<void> {
    this.subscription = new Subscription({
      client: this.deps.subscriber,
      channels: [keys.eventLogChannel()],
      onMessage: (_channel, deviceId) => this.byDevice.get(deviceId)?.forEach((s) => s.wake()),
      // Publications were missed while away: every stream reads its log again.
      onSubscribed: () => this.byDevice.forEach((set) => set.forEach((s) => s.wake())),
      logger: this.deps.logger,
      gauge: this.deps.metrics.redisSubscribed,
    });
    return this.subscription.start();
  }

  /** False when the token already holds its share: the caller answers 429 before streaming. */
  canOpen(tokenHash: string): boolean {
    return !this.closed && (this.perToken.get(tokenHash) ?? 0) < this.deps.config.perToken;
  }

  /**
   * Streams `deviceId`'s log on `res` after `after` (from the newest event now when absent), then
   * live, until the client goes, the reader is cut, or the process stops.
   */
  async open(
    res: Response,
    o: { tokenHash: string; deviceId: string; after?: string; types?: readonly EventType[] },
  ): Promise<void> {
    const stream = new EventStream(this.deps, res, o.deviceId, o.types, () =>
      this.forget(stream, o.tokenHash),
    );
    this.perToken.set(o.tokenHash, (this.perToken.get(o.tokenHash) ?? 0) + 1);
    let set = this.byDevice.get(o.deviceId);
    if (!set) this.byDevice.set(o.deviceId, (set = new Set()));
    set.add(stream);
    this.deps.metrics.eventStreamsOpen.inc();
    // Registered before the cursor is taken: an event appended meanwhile wakes it.
    await stream.begin(o.after);
  }

  private forget(stream: EventStream, tokenHash: string): void {
    const set = this.byDevice.get(stream.deviceId);
    if (!set?.delete(stream)) return;
    if (set.size === 0) this.byDevice.delete(stream.deviceId);
    const left = (this.perToken.get(tokenHash) ?? 1) - 1;
    if (left > 0) this.perToken.set(tokenHash, left);
    else this.perToken.delete(tokenHash);
    this.deps.metrics.eventStreamsOpen.dec();
  }

  /** Ends every stream (their clients reconnect elsewhere with Last-Event-ID) and unsubscribes. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.byDevice.forEach((set) => set.forEach((s) => s.cut('shutdown')));
    await this.subscription?.stop();
  }
}

class EventStream {
  private cursor: string | undefined;
  /** The client gave a cursor: a log that no longer holds it is announced (`event: truncated`). */
  private resumed = false;
  private ended = false;
  private pumping = false;
  private again = false;
  private keepAlive: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: {
      eventLog: EventLog;
      logger: Logger;
      metrics: Metrics;
      config: EventStreamConfig;
    },
    private readonly res: Response,
    readonly deviceId: string,
    private readonly types: readonly EventType[] | undefined,
    private readonly onEnd: () => void,
  ) {
    res.on('close', () => this.finish());
  }

  async begin(after: string | undefined): Promise<void> {
    const { res, deps } = this;
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache, no-store');
    res.setHeader('Connection', 'keep-alive');
    // nginx and its kind would otherwise buffer the stream.
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    this.write(`retry: ${RETRY_MS}\n\n`);
    this.keepAlive = setInterval(() => {
      // A full socket already has bytes on their way; adding more would only grow its buffer.
      if (!res.writableNeedDrain) this.write(': keep-alive\n\n');
    }, deps.config.keepAliveMs);
    this.keepAlive.unref();
    try {
      this.resumed = after !== undefined;
      this.cursor = after ?? (await deps.eventLog.last(this.deviceId)) ?? '0-0';
    } catch (err) {
      return this.fail(err);
    }
    this.wake();
  }

  /** The log grew (or may have): read it after the cursor, unless a read is under way (it goes on). */
  wake(): void {
    if (this.ended) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    if (this.cursor === undefined) return;
    this.pumping = true;
    void this.pump().finally(() => (this.pumping = false));
  }

  private async pump(): Promise<void> {
    try {
      do {
        this.again = false;
        for (;;) {
          const from = this.cursor!;
          const page = await this.deps.eventLog.read(this.deviceId, {
            after: from,
            limit: PAGE,
            ...(this.types ? { types: this.types } : {}),
          });
          if (this.ended) return;
          // The client's cursor is older than the log: said once, as an event of its own type.
          if (page.truncated && this.resumed)
            this.write(`event: truncated\ndata: ${JSON.stringify({ after: from })}\n\n`);
          for (const e of page.events) {
            if (this.ended) return;
            this.send(e);
            this.cursor = e.cursor;
            if (!(await this.keptUp())) return;
          }
          this.cursor = page.nextCursor ?? from;
          // Done when the cursor stood still; without a filter, a short page is the end too.
          if (this.cursor === from || (!this.types && page.events.length < PAGE)) break;
        }
      } while (this.again && !this.ended);
    } catch (err) {
      this.fail(err);
    }
  }

  private send(e: LoggedEvent): void {
    const data = JSON.stringify({ id: e.id, type: e.type, timestamp: e.timestamp, data: e.data });
    this.write(`id: ${e.cursor}\nevent: ${e.type}\ndata: ${data}\n\n`);
  }

  /**
   * After a write: while the socket holds more than `maxBufferedBytes`, nothing more is read or
   * written until it has taken it all (`drain`); false (and the reader cut) after `stallMs`.
   */
  private async keptUp(): Promise<boolean> {
    const { res } = this;
    if (!res.writableNeedDrain || res.writableLength <= this.deps.config.maxBufferedBytes) return true;
    return this.drained();
  }

  /** Waits for the socket to take what waits; false (and the reader cut) after `stallMs`. */
  private drained(): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.res.off('drain', onDrain);
        this.res.off('close', onClose);
        resolve(ok && !this.ended);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      const timer = setTimeout(() => {
        this.cut('slow_reader');
        done(false);
      }, this.deps.config.stallMs);
      this.res.on('drain', onDrain);
      this.res.on('close', onClose);
    });
  }

  private write(text: string): void {
    if (!this.ended) this.res.write(text);
  }

  private fail(err: unknown): void {
    if (this.ended) return;
    this.deps.logger.warn('event stream ended: its log could not be read', {
      deviceId: this.deviceId,
      err: serializeError(err),
    });
    this.cut('error');
  }

  /** Ends the stream from this side: an `error` event naming why (if the socket takes it), then the end. */
  cut(reason: CutReason): void {
    if (this.ended) return;
    this.deps.metrics.eventStreamsCut.inc({ reason });
    if (reason !== 'shutdown') this.write(`event: error\ndata: ${JSON.stringify({ reason })}\n\n`);
    this.finish();
    this.res.end();
    // A reader that does not read never takes the end either: its socket goes.
    const socket = this.res.socket;
    if (reason === 'slow_reader' && socket && !socket.destroyed)
      setTimeout(() => socket.destroy(), END_GRACE_MS).unref();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.keepAlive);
    this.onEnd();
  }
}
