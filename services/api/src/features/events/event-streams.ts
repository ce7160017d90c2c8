import { Subscription, type Logger, type RedisClient } from '@mgw/common';
import { keys, type EventType, type Metrics } from '@mgw/contracts';
import type { EventLog } from '@mgw/store';
import type { EventStreamConfig } from '../../config.js';
import { SharedLogReads } from './shared-log-reads.js';
import { EventStream, type StreamOutput } from './event-stream.js';

/**
 * The open event streams of this API process, and the one subscription that tells them the log
 * grew. A stream is the same engine whatever carries it (event-stream.ts): Server-Sent
 * Events (`GET /events/stream`, `SseOutput` in http/sse-output.ts; the dashboard's
 * `GET /api/admin/v1/events/stream` too) or a WebSocket (`GET /events/ws`, in this feature's mount.ts).
 * One per-token count covers them all.
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

/**
 * How long a publication waits before its device's streams read: appends within it go out in one
 * read and one write per stream (under load), for at most this much latency.
 */
const WAKE_BATCH_MS = 50;
/** The greatest sequence part of a stream entry id: `<ms - 1>-MAX_SEQ` is "from `<ms>` on". */
const MAX_SEQ = '18446744073709551615';

export interface OpenOptions {
  /** What the per-token limit counts under: the API token's hash, or an admin session's key. */
  key: string;
  /** One device (its log, resumable by cursor), or every device (live from now). */
  devices: { one: string } | 'all';
  /** Every device: those whose events the stream may send (a workspace's console: its own). */
  only?: (deviceId: string) => Promise<boolean>;
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
      /** The log: its reads (shared, SharedLogReads) and a device's newest event (a stream's start). */
      eventLog: Pick<EventLog, 'read' | 'last'>;
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
    const stream = new EventStream(
      { ...this.deps, reads: this.reads },
      output,
      o.types,
      () => this.forget(stream, o.key),
      o.only,
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
