import { contextOf, recordSpan, serializeError, tracer, tracingOn, type Logger } from '@mgw/common';
import {
  brokerSettingAt,
  brokerSettingsAfter,
  brokerWants,
  type BrokerSettingHistory,
  type Metrics,
} from '@mgw/contracts';
import type {
  BrokerRelayState,
  BrokerSettingsStore,
  HeldLease,
  RelayEvent,
  RelayPage,
  WebhookReport,
} from '@mgw/store';
import type { BrokerMessage, BrokerTransport } from './transport.js';

export interface BrokerRelayOptions {
  transport: BrokerTransport;
  state: BrokerRelayState;
  settings: Pick<BrokerSettingsStore, 'history'>;
  /** This notifier's lease owner id. */
  owner: string;
  /** Events read and published together (all in flight, then every confirm awaited). */
  batch: number;
  /** Devices served at once by this notifier for this transport. */
  concurrency: number;
  /** After a refused or lost publish, the device tries again this much later (or at the reconnection). */
  retryMs: number;
  /** A publish not confirmed within this is taken as failed (published again). */
  publishTimeoutMs: number;
  metrics: Metrics;
  logger: Logger;
  /**
   * Where a failed publish, and why events wait while the transport is down, are recorded for the
   * operator (the dashboard's Events tab).
   */
  report?: Pick<WebhookReport, 'brokerFailed'>;
}

/** What this notifier knows of one device for this transport. */
interface DeviceRun {
  running: boolean;
  /** Woken while running: serve again once done (an event may have come after the last read). */
  again: boolean;
  /** Events after the cursor as last read: those the device wants, once judged. */
  backlog: number;
  /** When (ms) the oldest of them was written. */
  oldestMs?: number;
  retry?: NodeJS.Timeout;
  /** While the transport is down: when the events waiting were last judged (one page read). */
  judgedAt?: number;
  /** While the transport is down: its problem as last recorded as this device's last error. */
  reported?: string;
}

/** What becomes of an event of the log on this transport. */
type Verdict = 'publish' | 'skip' | 'unreadable' | 'unknown';

/** Stream entry ids start with their time (ms). */
const entryMs = (id: string): number => Number(id.slice(0, id.indexOf('-')));

/**
 * Publishes the devices' event logs to one broker, in order per device, at least once.
 *
 * For a device, the relay takes the (transport, device) lease (`BrokerRelayState`: the lease
 * with fencing of @mgw/store coordination; one notifier at a time publishes a device to a
 * transport, so its events reach the broker in log order whatever the number of replicas), reads
 * a page of the log after the transport's cursor, publishes the events the device's setting
 * wanted when each was logged (PUT /events/brokers; all by default, none for an opt-in transport;
 * a change governs only the events logged after it, so a broker down meanwhile neither replays
 * what a device did not want nor drops what it did) all at once, waits until the broker confirmed
 * every one, and only then moves the cursor on (fenced: a notifier that lost the lease meanwhile moves
 * nothing); then the next page, until the log is read; then it gives the lease back. A publish
 * that fails (broker down, refused, not confirmed in time) leaves the cursor at the first event
 * the device wants: the events from there are published again later (same ids: RabbitMQ
 * consumers see a redelivered copy, JetStream drops it within its duplicate window). Events older
 * than the transport's start on this install are passed over, not published.
 *
 * While the transport is down, the events a device does not want are passed over all the same
 * (judging them needs no broker), and the backlog gauges count what each device would get: the
 * events it wants after its cursor (exact within a page of `batch`; beyond it, by the setting that
 * governs them). With every event wanted (RabbitMQ's and NATS' default) that is the log's length
 * after the cursor, one entry read; otherwise a page is judged, at most once per `retryMs` per
 * device. Why the transport is down (its `problem`) becomes the last error of each device whose
 * events wait, once per problem (the dashboard's Events tab), no publish failure counted.
 *
 * A device is served when its log grows (`wake`, from the log channel), at each reconnection of
 * the broker (every device known to wait), after a failed publish (`retryMs`), and by the
 * periodic sweep (every linked device), which also takes over a device whose notifier died (its
 * lease lapsed).
 */
export class BrokerRelay {
  private readonly devices = new Map<string, DeviceRun>();
  private startMs = 0;
  private active = 0;
  private readonly slots: (() => void)[] = [];
  private stopped = false;
  private lastFailureLog = 0;
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly o: BrokerRelayOptions) {}

  get name(): string {
    return this.o.transport.name;
  }

  get connected(): boolean {
    return this.o.transport.connected;
  }

  /** Reads (or sets) the transport's start on this install, then connects in the background. */
  async start(): Promise<void> {
    this.startMs = await this.o.state.startedAt();
    this.o.metrics.brokerConnected.set({ transport: this.name }, 0);
    this.o.transport.start(() => this.wakeWaiting());
  }

  /** Serves `deviceId` now (or once the run under way ends). */
  wake(deviceId: string): void {
    if (this.stopped) return;
    let d = this.devices.get(deviceId);
    if (!d) this.devices.set(deviceId, (d = { running: false, again: false, backlog: 0 }));
    if (d.running) {
      d.again = true;
      return;
    }
    clearTimeout(d.retry);
    d.retry = undefined;
    d.running = true;
    const run = this.run(deviceId, d);
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
  }

  /** Every device known to have events waiting (the broker is back). */
  wakeWaiting(): void {
    for (const [deviceId, d] of this.devices) if (d.backlog > 0 || d.retry) this.wake(deviceId);
  }

  /** The gauges of this transport, as last read (called on each scrape). */
  collect(): void {
    let backlog = 0;
    let oldest = Infinity;
    for (const d of this.devices.values()) {
      backlog += d.backlog;
      if (d.backlog > 0 && d.oldestMs !== undefined) oldest = Math.min(oldest, d.oldestMs);
    }
    const { metrics } = this.o;
    metrics.brokerBacklog.set({ transport: this.name }, backlog);
    metrics.brokerOldestPending.set(
      { transport: this.name },
      oldest === Infinity ? 0 : Math.max(0, (Date.now() - oldest) / 1000),
    );
  }

  /** Stops serving: runs under way end after their current page; the connection closes. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const d of this.devices.values()) clearTimeout(d.retry);
    this.slots.splice(0).forEach((go) => go());
    await Promise.allSettled([...this.running]);
    await this.o.transport.close();
    this.o.metrics.brokerConnected.set({ transport: this.name }, 0);
  }

  private async run(deviceId: string, d: DeviceRun): Promise<void> {
    await this.slot();
    try {
      do {
        d.again = false;
        await this.serve(deviceId, d).catch((err: unknown) => {
          this.o.logger.warn('broker relay: serving a device failed', {
            transport: this.name,
            deviceId,
            err: serializeError(err),
          });
          this.retryLater(deviceId, d);
        });
      } while (d.again && !this.stopped);
    } finally {
      d.running = false;
      this.active--;
      this.slots.shift()?.();
      // Nothing waits and nothing is scheduled: forgotten (the map holds only devices with work).
      if (d.backlog === 0 && !d.retry && !d.running) this.devices.delete(deviceId);
    }
  }

  private slot(): Promise<void> {
    if (this.active < this.o.concurrency || this.stopped) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((go) =>
      this.slots.push(() => {
        this.active++;
        go();
      }),
    );
  }

  private async serve(deviceId: string, d: DeviceRun): Promise<void> {
    const { state, transport, owner, batch } = this.o;
    if (this.stopped) return;
    if (transport.connected) d.reported = undefined;
    else if (await this.measuredWhileDown(deviceId, d)) return;
    const lease = await state.acquire(deviceId, owner);
    if (!lease) {
      // Another notifier publishes this device now (it serves what was just written too, and
      // its gauges count the backlog).
      d.backlog = 0;
      d.oldestMs = undefined;
      return;
    }
    try {
      let cursor = await state.cursor(deviceId);
      while (!this.stopped) {
        const page = await state.read(deviceId, cursor, batch);
        this.measure(d, page);
        const last = page.events.at(-1);
        // (Events the log dropped are counted when the cursor moves past them: `pass`.)
        if (!last) return;
        // Read after the page: a change made since is bound to a log id after the page's events,
        // so each of them is judged by the setting in force when it was logged.
        const settings = await this.o.settings.history(deviceId, this.name);
        const verdicts = page.events.map((e) => this.verdict(e, settings));
        const out = page.events.filter((_, i) => verdicts[i] === 'publish');
        if (out.length) {
          if (!transport.connected) {
            // Nothing to publish to: what the device does not want is passed over all the same
            // (it needs no broker), what it wants waits and is counted; served at the reconnection.
            await this.hold(lease, deviceId, d, page, verdicts, settings);
            this.reportWaiting(deviceId, d);
            return;
          }
          const started = Date.now();
          try {
            await this.publish(out.map((e) => toMessage(deviceId, e)));
          } catch (err) {
            this.failed(deviceId, d, err);
            await this.hold(lease, deviceId, d, page, verdicts, settings);
            return;
          }
          this.o.metrics.brokerPublished.inc({ transport: this.name }, out.length);
          tracePublished(this.name, deviceId, out, started);
        }
        // Confirmed (or nothing wanted): the cursor moves on, unless the lease was lost meanwhile.
        if (!(await this.pass(lease, deviceId, page, verdicts, page.events.length))) return;
        cursor = last.cursor;
        d.backlog = page.backlog;
        if (page.backlog === 0) d.oldestMs = undefined;
      }
    } finally {
      await state.release(lease).catch(() => {});
    }
  }

  /** Whether the event goes out to this transport (the device's setting when it was logged). */
  private verdict(e: RelayEvent, settings: BrokerSettingHistory): Verdict {
    if (e.unreadable) return 'unreadable';
    if (entryMs(e.cursor.id) < this.startMs) return 'skip';
    const setting = brokerSettingAt(settings, e.cursor.id);
    // Logged before the oldest setting kept: not known to be wanted, so not published.
    if (!setting) return 'unknown';
    return brokerWants(setting, e.type) ? 'publish' : 'skip';
  }

  /**
   * The transport is down. When every event after the cursor is wanted (a setting that takes
   * every type governs them all: RabbitMQ's and NATS' default), they are counted from the log's
   * length with one entry read (the oldest), and true is returned. So is it, without a read, when
   * events the device wants were judged less than `retryMs` ago (judged again then). Otherwise
   * (an opt-in transport, types picked, a change in the range) false: `serve` judges a page.
   */
  private async measuredWhileDown(deviceId: string, d: DeviceRun): Promise<boolean> {
    const { state } = this.o;
    const [cursor, settings] = await Promise.all([
      state.cursor(deviceId),
      this.o.settings.history(deviceId, this.name),
    ]);
    if (brokerSettingsAfter(settings, cursor?.id).every((s) => s?.enabled && !s.events)) {
      this.measure(d, await state.read(deviceId, cursor, 1));
      this.reportWaiting(deviceId, d);
      return true;
    }
    if (d.backlog > 0 && d.judgedAt !== undefined && Date.now() - d.judgedAt < this.o.retryMs) {
      this.retryLater(deviceId, d);
      return true;
    }
    return false;
  }

  /**
   * A page with events the device wants was not published (the transport is down, or the publish
   * failed): the events before the first of them are passed over (the cursor moves to it), and
   * what waits is counted as the device would get it — exactly within the page; the entries after
   * the page by the setting that governs them (none when it is off, all of them otherwise: for a
   * setting that picks types, at most that many).
   */
  private async hold(
    lease: HeldLease,
    deviceId: string,
    d: DeviceRun,
    page: RelayPage,
    verdicts: Verdict[],
    settings: BrokerSettingHistory,
  ): Promise<void> {
    d.judgedAt = Date.now();
    const first = verdicts.indexOf('publish');
    if (first > 0 && !(await this.pass(lease, deviceId, page, verdicts, first))) {
      d.backlog = 0;
      d.oldestMs = undefined;
      return;
    }
    let waiting = verdicts.filter((v, i) => i >= first && v === 'publish').length;
    if (
      page.backlog > 0 &&
      brokerSettingsAfter(settings, page.events.at(-1)!.cursor.id).some((s) => s?.enabled)
    )
      waiting += page.backlog;
    d.backlog = waiting;
    d.oldestMs = entryMs(page.events[first]!.cursor.id);
  }

  /**
   * Moves the cursor past the page's first `n` events (published, or not wanted) under the lease;
   * false when the lease was lost (nothing moved). Only then are the events the log dropped before
   * the page counted lost, and those of the `n` that cannot be opened or are older than every kept
   * setting logged: once each, however often the page was read.
   */
  private async pass(
    lease: HeldLease,
    deviceId: string,
    page: RelayPage,
    verdicts: Verdict[],
    n: number,
  ): Promise<boolean> {
    if (!(await this.o.state.advance(lease, page.events[n - 1]!.cursor))) return false;
    if (page.lost > 0) {
      this.o.metrics.brokerLost.inc({ transport: this.name }, page.lost);
      this.o.logger.error('broker relay: events dropped from the log before the broker took them', {
        transport: this.name,
        deviceId,
        lost: page.lost,
      });
    }
    const passed = page.events.slice(0, n);
    const unreadable = passed.filter((_, i) => verdicts[i] === 'unreadable');
    if (unreadable.length) this.passOver(deviceId, unreadable);
    const unknown = verdicts.slice(0, n).filter((v) => v === 'unknown').length;
    if (unknown)
      // Logged before the oldest setting kept (the device changed it more often than its
      // history keeps while they waited): not known to be wanted, so not published.
      this.o.logger.warn(
        'broker relay: events older than the device’s oldest kept setting were passed over',
        {
          transport: this.name,
          deviceId,
          events: unknown,
        },
      );
    return true;
  }

  /**
   * The transport is down and events of the device wait: why (the transport's `problem`) becomes
   * the device's last error for it (the dashboard's Events tab), once per problem and device — no
   * publish was attempted, so no publish failure is counted.
   */
  private reportWaiting(deviceId: string, d: DeviceRun): void {
    const problem = this.o.transport.problem;
    if (d.backlog === 0 || !problem || d.reported === problem || this.o.transport.connected) return;
    d.reported = problem;
    void this.o.report
      ?.brokerFailed(deviceId, this.name, `not connected (events wait): ${problem}`)
      .catch(() => undefined);
  }

  /**
   * Events whose sealed data cannot be opened are passed over (counted lost, their ids logged):
   * retried, they would hold back every later event of the device for good.
   */
  private passOver(deviceId: string, events: RelayEvent[]): void {
    this.o.metrics.brokerLost.inc({ transport: this.name }, events.length);
    this.o.logger.error('broker relay: events that cannot be opened were passed over', {
      transport: this.name,
      deviceId,
      eventIds: events.map((e) => e.id),
      problem: events[0]!.unreadable,
    });
  }

  private measure(d: DeviceRun, page: { events: RelayEvent[]; backlog: number }): void {
    d.backlog = page.backlog + page.events.length;
    const first = page.events[0];
    d.oldestMs = first ? entryMs(first.cursor.id) : undefined;
  }

  private async publish(messages: BrokerMessage[]): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`not confirmed within ${this.o.publishTimeoutMs} ms`)),
        this.o.publishTimeoutMs,
      );
    });
    try {
      await Promise.race([this.o.transport.publish(messages), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private failed(deviceId: string, d: DeviceRun, err: unknown): void {
    this.o.metrics.brokerPublishFailures.inc({ transport: this.name });
    // The device's last error for this transport (scrubbed as the log line is): what the operator sees.
    void this.o.report
      ?.brokerFailed(deviceId, this.name, String(serializeError(err).message ?? 'publish failed'))
      .catch(() => undefined);
    const now = Date.now();
    // One line per transport every 10 s at most: a broker down fails every device's publish.
    if (now - this.lastFailureLog > 10_000) {
      this.lastFailureLog = now;
      this.o.logger.warn('broker relay: publish failed; events wait in the log', {
        transport: this.name,
        deviceId,
        err: serializeError(err),
      });
    }
    this.retryLater(deviceId, d);
  }

  private retryLater(deviceId: string, d: DeviceRun): void {
    if (this.stopped || d.retry) return;
    d.retry = setTimeout(() => {
      d.retry = undefined;
      this.wake(deviceId);
    }, this.o.retryMs);
    d.retry.unref();
  }
}

const notifier = tracer('notifier');

/**
 * Each confirmed event about a traced message (tracing on): a `broker.publish` span in its
 * message's trace, from the page's publish to the broker's confirmation.
 */
function tracePublished(transport: string, deviceId: string, events: RelayEvent[], started: number): void {
  if (!tracingOn()) return;
  const end = Date.now();
  for (const e of events) {
    if (!e.traceparent) continue;
    recordSpan(notifier, 'broker.publish', {
      parent: contextOf(e.traceparent),
      startTime: started,
      endTime: end,
      attributes: {
        'mgw.transport': transport,
        'mgw.device': deviceId,
        'mgw.event.type': e.type,
        'mgw.event.id': e.id,
      },
    });
  }
}

/** The broker message of an event: the webhook's body, the event id. */
function toMessage(deviceId: string, e: RelayEvent): BrokerMessage {
  return {
    deviceId,
    id: e.id,
    type: e.type,
    timestamp: e.timestamp,
    // The webhook's body, `{type, timestamp, data}`, built around the data's JSON as stored (no
    // parse and stringify per event: the relay's hottest line).
    body: Buffer.from(
      `{"type":${JSON.stringify(e.type)},"timestamp":${JSON.stringify(e.timestamp)},"data":${e.dataJson}}`,
    ),
  };
}
