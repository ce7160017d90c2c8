import type { EventEmitter } from 'node:events';
import type { Response } from 'express';
import type { LoggedEvent } from '@mgw/store';
import { END_GRACE_MS, type CutReason, type StreamOutput } from '../features/events/event-stream.js';

/** A client that lost its stream waits this long before reconnecting (the SSE `retry:` hint). */
const RETRY_MS = 3000;

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
