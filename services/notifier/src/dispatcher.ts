import { serializeError, type Logger } from '@mgw/common';
import type { PendingDelivery, WebhookDeliveries, WebhookReport } from '@mgw/store';
import { tracedAttempt, type AttemptAnswer, type DeliveryDeps } from './delivery.js';
import { retryDelayMs, type RetrySchedule } from './retry-schedule.js';

export interface DispatcherOptions {
  store: WebhookDeliveries;
  /** This notifier's name (the lease tokens start with it). */
  owner: string;
  /** Deliveries of one device in flight at once, cluster-wide (1 keeps emission order). */
  concurrency: number;
  retry: RetrySchedule;
  delivery: DeliveryDeps;
  logger: Logger;
  /** Legacy per-device BullMQ queues moved over when a device is first served (see legacy-queues.ts). */
  adoptLegacy?: (deviceId: string, token: string) => Promise<void>;
  /** Where each attempt's end is recorded for the operator (the dashboard's Events tab). */
  report?: Pick<WebhookReport, 'record'>;
}

/** Outbox entries (or due retries) read at once. */
const PAGE = 100;
/** A device another notifier holds is not asked for again within this (unless a sweep asks). */
const HELD_RECHECK_MS = 1000;
/** Margin on top of an attempt's budget the lease must still have before an attempt starts. */
const LEASE_MARGIN_MS = 1000;

class LeaseLostError extends Error {
  override name = 'LeaseLostError';
}

/**
 * Delivers the events of the devices whose lease this notifier holds. Any notifier takes a
 * device's lease when it has work and nobody holds it (woken by the outbox notification, a retry
 * coming due, or the sweep), runs up to `concurrency` attempts of it at once, and gives the lease
 * back when the device has nothing left. A device is thus served by one notifier at a time, so
 * at most `concurrency` of its deliveries are in flight cluster-wide; a notifier that dies holds
 * its devices only until their leases lapse (`WEBHOOK_TIMEOUT_MS` + 5 s), and no Redis
 * connection is opened per device.
 *
 * An attempt starts only while the lease has at least the attempt's budget (plus a margin) left,
 * so it ends before another notifier could take the device over; its outcome is written under
 * the lease's fencing token, so a notifier that lost its lease writes nothing.
 */
export class DeliveryDispatcher {
  private readonly runners = new Map<string, DeviceRunner>();
  private readonly acquiring = new Set<string>();
  /** Devices asked for again while being acquired or served. */
  private readonly again = new Set<string>();
  private readonly heldElsewhere = new Map<string, number>();
  private readonly retryTimers = new Map<string, NodeJS.Timeout>();
  private readonly legacyChecked = new Set<string>();
  private stopping = false;
  readonly leaseMs: number;

  constructor(readonly opts: DispatcherOptions) {
    // An attempt is bounded by the timeout: a lease a little longer never lapses under a live one.
    this.leaseMs = opts.delivery.timeoutMs + 5_000;
  }

  /**
   * Serve the device if it has work and nobody does. `sweep`: also when another notifier was seen
   * holding it a moment ago (the periodic sweep takes over devices of a dead notifier).
   */
  kick(deviceId: string, sweep = false): Promise<void> {
    if (this.stopping) return Promise.resolve();
    if (this.runners.has(deviceId) || this.acquiring.has(deviceId)) {
      this.again.add(deviceId);
      return Promise.resolve();
    }
    if (!sweep && (this.heldElsewhere.get(deviceId) ?? 0) > Date.now()) return Promise.resolve();
    return this.acquire(deviceId);
  }

  private async acquire(deviceId: string): Promise<void> {
    const { store, owner, logger } = this.opts;
    this.acquiring.add(deviceId);
    this.again.delete(deviceId);
    try {
      const r = await store.acquire(deviceId, owner, this.leaseMs);
      if (r.kind === 'held') {
        this.heldElsewhere.set(deviceId, Date.now() + Math.min(r.ttlMs, HELD_RECHECK_MS));
        return;
      }
      this.heldElsewhere.delete(deviceId);
      if (r.kind === 'idle') return;
      const runner = new DeviceRunner(this, deviceId, r.token, Date.now() + this.leaseMs);
      this.runners.set(deviceId, runner);
      void runner.run().finally(() => {
        this.runners.delete(deviceId);
        this.followUp(deviceId);
      });
    } catch (err) {
      logger.warn('webhook lease not taken', { deviceId, err: serializeError(err) });
    } finally {
      this.acquiring.delete(deviceId);
      this.followUp(deviceId);
    }
  }

  /** A device asked for while busy is asked for again once free. */
  private followUp(deviceId: string): void {
    if (this.runners.has(deviceId) || this.acquiring.has(deviceId)) return;
    if (this.again.delete(deviceId)) void this.kick(deviceId, true);
  }

  /** First time this process serves the device: move a legacy queue's jobs over (once). */
  async adoptLegacyOnce(deviceId: string, token: string): Promise<void> {
    if (!this.opts.adoptLegacy || this.legacyChecked.has(deviceId)) return;
    await this.opts.adoptLegacy(deviceId, token);
    this.legacyChecked.add(deviceId);
  }

  /**
   * The device's retries may have changed under a notifier serving it (the operator's "retry
   * now" made them due, announced on the webhooks channel): the runner reads them again before
   * its next event (the kick that follows takes up a device nobody serves).
   */
  retriesChanged(deviceId: string): void {
    this.runners.get(deviceId)?.retriesChanged();
  }

  /** Wakes the device when its earliest retry is due (the sweep does it too, should this process die). */
  scheduleRetry(deviceId: string, at: number): void {
    clearTimeout(this.retryTimers.get(deviceId));
    if (this.stopping) return;
    const timer = setTimeout(
      () => {
        this.retryTimers.delete(deviceId);
        void this.kick(deviceId, true);
      },
      Math.max(0, at - Date.now()) + 5,
    );
    timer.unref();
    this.retryTimers.set(deviceId, timer);
  }

  get isStopping(): boolean {
    return this.stopping;
  }

  /** Attempts in flight in this process. */
  inFlight(): number {
    let n = 0;
    for (const r of this.runners.values()) n += r.inFlight;
    return n;
  }

  /** Devices this process serves now. */
  devices(): string[] {
    return [...this.runners.keys()];
  }

  /** Lets attempts in flight end, then gives every lease back so another notifier takes over at once. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const t of this.retryTimers.values()) clearTimeout(t);
    this.retryTimers.clear();
    for (const r of this.runners.values()) r.wake();
    await Promise.all([...this.runners.values()].map((r) => r.done));
  }
}

/** Serves one device while this notifier holds its lease. */
class DeviceRunner {
  inFlight = 0;
  done: Promise<void> = Promise.resolve();
  private readonly buffer: PendingDelivery[] = [];
  private readonly inFlightIds = new Set<string>();
  private cursor = '-';
  private nextRetryAt: number | undefined;
  private failure: Error | undefined;
  private wakeUp: (() => void) | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private lastRenewAt: number;
  private readonly log: Logger;

  constructor(
    private readonly dispatcher: DeliveryDispatcher,
    private readonly deviceId: string,
    private readonly token: string,
    private validUntil: number,
  ) {
    this.log = dispatcher.opts.logger.child({ deviceId });
    this.lastRenewAt = Date.now();
  }

  run(): Promise<void> {
    this.done = this.loop();
    return this.done;
  }

  /** The retries are read again at the next fill (see DeliveryDispatcher.retriesChanged). */
  retriesChanged(): void {
    this.nextRetryAt = 0;
  }

  wake(): void {
    const w = this.wakeUp;
    this.wakeUp = undefined;
    w?.();
  }

  private async loop(): Promise<void> {
    const { store, concurrency } = this.dispatcher.opts;
    const leaseMs = this.dispatcher.leaseMs;
    // Kept alive during a long attempt; a settled attempt extends it too.
    const renewEvery = Math.min(2000, leaseMs / 3);
    this.renewTimer = setInterval(() => {
      if (Date.now() - this.lastRenewAt >= renewEvery) void this.renew().catch(() => undefined);
    }, renewEvery / 2);
    let busyInARow = 0;
    try {
      await this.dispatcher.adoptLegacyOnce(this.deviceId, this.token);
      this.nextRetryAt = await store.nextRetryAt(this.deviceId);
      for (;;) {
        if (this.failure) throw this.failure;
        if (this.dispatcher.isStopping) break;
        if (this.buffer.length === 0) await this.fill();
        if (this.buffer.length === 0) {
          if (this.inFlight > 0) {
            await this.slotFreed();
            continue;
          }
          const r = await store.release(this.deviceId, this.token);
          if (r.kind === 'lost') throw new LeaseLostError('lease lost');
          if (r.kind === 'released') {
            if (r.nextRetryAt !== undefined) this.dispatcher.scheduleRetry(this.deviceId, r.nextRetryAt);
            return;
          }
          // Work arrived since the last read; entries left behind a cursor would be read again.
          if (++busyInARow > 1) this.cursor = '-';
          // The work may be retries made due since they were read ("retry now"): read them again.
          this.nextRetryAt = await store.nextRetryAt(this.deviceId);
          continue;
        }
        busyInARow = 0;
        if (this.inFlight >= concurrency) {
          await this.slotFreed();
          continue;
        }
        await this.ensureLease();
        const item = this.buffer.shift()!;
        this.start(item);
      }
      // Stopping: the attempts under way end, then the lease goes back with any work left.
      while (this.inFlight > 0) await this.slotFreed();
      if (this.failure) throw this.failure;
      await store.release(this.deviceId, this.token, true);
    } catch (err) {
      while (this.inFlight > 0) await this.slotFreed();
      if (err instanceof LeaseLostError) {
        this.log.warn('webhook lease lost; another notifier serves the device', {});
      } else {
        this.log.warn('webhook deliveries interrupted', { err: serializeError(err) });
        // Given back so that this or another notifier takes the device up at its next sweep.
        await store.release(this.deviceId, this.token, true).catch(() => undefined);
      }
    } finally {
      clearInterval(this.renewTimer);
    }
  }

  /** Due retries first (they are older), then the outbox after what was read already. */
  private async fill(): Promise<void> {
    const { store } = this.dispatcher.opts;
    if (this.nextRetryAt !== undefined && this.nextRetryAt <= Date.now()) {
      const due = await store.dueRetries(this.deviceId, PAGE);
      this.buffer.push(...due.filter((d) => !this.inFlightIds.has(d.event.id)));
      // Retries in flight stay in the set until settled, so this may be now again: read once more then.
      if (due.length < PAGE) this.nextRetryAt = await store.nextRetryAt(this.deviceId);
      if (this.buffer.length > 0) return;
    }
    const entries = await store.readOutbox(this.deviceId, this.cursor, PAGE);
    const last = entries.at(-1);
    if (last?.streamId) this.cursor = last.streamId;
    this.buffer.push(...entries.filter((e) => !this.inFlightIds.has(e.event.id)));
  }

  private start(item: PendingDelivery): void {
    this.inFlight++;
    this.inFlightIds.add(item.event.id);
    void this.attempt(item)
      .catch((err: unknown) => {
        this.failure ??= err instanceof Error ? err : new Error(String(err));
      })
      .finally(() => {
        this.inFlight--;
        this.inFlightIds.delete(item.event.id);
        this.wake();
      });
  }

  private async attempt(item: PendingDelivery): Promise<void> {
    const { store, delivery, retry, report } = this.dispatcher.opts;
    let answer: AttemptAnswer;
    try {
      answer = await tracedAttempt(item, this.deviceId, { ...delivery, logger: this.log });
    } catch (err) {
      // Not the endpoint's answer (e.g. Redis unreachable mid-attempt): tried again like a failure.
      this.log.warn('webhook attempt failed before its answer', {
        eventId: item.event.id,
        err: serializeError(err),
      });
      answer = {
        result: item.attemptsMade + 1 >= delivery.maxAttempts ? 'exhausted' : 'retry',
        problem: 'the attempt failed before its answer',
      };
    }
    const { result } = answer;
    const dueMs = result === 'retry' ? Date.now() + retryDelayMs(retry, item.attemptsMade + 1) : undefined;
    const sentAt = Date.now();
    // The report is written beside the outcome (same lease, fenced; sent together, so no extra
    // wait): it is the operator's view, so a failure to write it never fails the delivery.
    const [ok] = await Promise.all([
      store.settle(
        this.deviceId,
        this.token,
        this.dispatcher.leaseMs,
        item,
        dueMs === undefined ? { done: true } : { done: false, dueMs },
      ),
      report
        ?.record(this.deviceId, this.token, {
          at: new Date(sentAt).toISOString(),
          eventId: item.event.id,
          type: item.event.type,
          outcome: result,
          attempt: item.attemptsMade + 1,
          ...(answer.status !== undefined ? { status: answer.status } : {}),
          ...(answer.problem && result !== 'delivered' ? { error: answer.problem } : {}),
        })
        .catch((err: unknown) =>
          this.log.warn('webhook report not written', { eventId: item.event.id, err: serializeError(err) }),
        ),
    ]);
    if (!ok) throw new LeaseLostError('lease lost');
    this.renewed(sentAt);
    if (dueMs !== undefined) this.nextRetryAt = Math.min(this.nextRetryAt ?? Infinity, dueMs);
  }

  private slotFreed(): Promise<void> {
    return new Promise((resolve) => {
      this.wakeUp = resolve;
    });
  }

  /** An attempt may start only while the lease outlives its budget. */
  private async ensureLease(): Promise<void> {
    const { timeoutMs } = this.dispatcher.opts.delivery;
    if (this.validUntil - Date.now() >= timeoutMs + LEASE_MARGIN_MS) return;
    await this.renew();
    if (this.validUntil - Date.now() < timeoutMs + LEASE_MARGIN_MS)
      throw new LeaseLostError('lease too short');
  }

  private async renew(): Promise<void> {
    const sentAt = Date.now();
    const ok = await this.dispatcher.opts.store.renew(this.deviceId, this.token, this.dispatcher.leaseMs);
    if (!ok) {
      this.failure ??= new LeaseLostError('lease lost');
      this.wake();
      throw this.failure;
    }
    this.renewed(sentAt);
  }

  private renewed(sentAt: number): void {
    this.lastRenewAt = sentAt;
    this.validUntil = Math.max(this.validUntil, sentAt + this.dispatcher.leaseMs);
  }
}
