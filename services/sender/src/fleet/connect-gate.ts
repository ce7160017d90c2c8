import { serializeError, type Logger } from '@mgw/common';
import { PRIORITY, type Metrics } from '@mgw/contracts';
import type { ConnectRate, SendQueue } from '@mgw/store';

/**
 * Admission of device socket opens (a restart without a storm): every open of a device's socket —
 * at start, at a takeover or hand-over, after a Redis outage, after a transient close — waits
 * here for a token of this sender's bucket (in process) and then of the host's (`ConnectBucket`,
 * in Redis, shared by every sender of the scope). Waiting devices go in priority order: an OTP
 * queued first, then messages queued or scheduled, then idle ones; ties by who waited longest.
 */

/** Priority classes, first served first. */
export const CONNECT_CLASSES = ['otp', 'queued', 'idle'] as const;
export type ConnectClass = (typeof CONNECT_CLASSES)[number];

/** The host-wide bucket (`ConnectBucket` of @mgw/store): 0 when a token was taken, else ms to wait. */
export interface HostBucket {
  take(): Promise<number>;
}

export interface ConnectGateOptions {
  /** This sender's bound (ratePerSecond 0 = none). */
  perSender: ConnectRate;
  /** The host's bound, shared through Redis (none when undefined). */
  host?: HostBucket;
  metrics?: Pick<Metrics, 'connectWaiting' | 'connectAdmitted' | 'connectWaitSeconds'>;
  logger: Logger;
  /** A wait this long is reported (one summary line at most this often). */
  longWaitMs?: number;
  /** Waiting devices' classes are read again this often (an OTP queued meanwhile moves its device up). */
  reclassifyMs?: number;
}

interface Waiter {
  deviceId: string;
  cls: ConnectClass;
  since: number;
  classify: () => Promise<ConnectClass>;
  resolve: (admitted: boolean) => void;
}

const RANK: Record<ConnectClass, number> = { otp: 0, queued: 1, idle: 2 };
/** A host bucket that does not answer within this long does not hold the opens (the sender's bound does). */
const HOST_TIMEOUT_MS = 2000;
/** Classes read at once when the waiting devices are classified again. */
const CLASSIFY_PARALLEL = 16;

/** The device's class from its send queue: an OTP job, any waiting, prioritized or delayed job, or none. */
export async function connectClassOf(queue: SendQueue): Promise<ConnectClass> {
  const [counts, byPriority] = await Promise.all([
    queue.getJobCounts('waiting', 'prioritized', 'delayed'),
    queue.getCountsPerPriority([PRIORITY.otp]),
  ]);
  if ((byPriority[PRIORITY.otp] ?? 0) > 0) return 'otp';
  return Object.values(counts).some((n) => n > 0) ? 'queued' : 'idle';
}

export class ConnectGate {
  private readonly waiting = new Set<Waiter>();
  private tokens: number;
  private refilledAt = Date.now();
  private holds = 0;
  private pumping = false;
  private wake: (() => void) | undefined;
  private closed = false;
  private reclassifyTimer: NodeJS.Timeout | undefined;
  private lastLongWaitLog = 0;
  private hostFailureLogged = 0;
  private readonly longWaitMs: number;
  private readonly reclassifyMs: number;

  constructor(private readonly opts: ConnectGateOptions) {
    this.tokens = Math.max(1, opts.perSender.burst);
    this.longWaitMs = opts.longWaitMs ?? 60_000;
    this.reclassifyMs = opts.reclassifyMs ?? 10_000;
  }

  /** Devices waiting for admission now. */
  get size(): number {
    return this.waiting.size;
  }

  /**
   * Puts a device in line (resolves once its class is known and it waits); `admitted` resolves
   * true when it may open its socket, false when `signal` aborted the wait (hand-over, stop).
   */
  async enter(
    deviceId: string,
    classify: () => Promise<ConnectClass>,
    signal: AbortSignal,
  ): Promise<{ admitted: Promise<boolean> }> {
    const since = Date.now();
    const cls = await this.classifySafely(deviceId, classify);
    if (signal.aborted || this.closed) return { admitted: Promise.resolve(false) };
    let resolve!: (admitted: boolean) => void;
    const admitted = new Promise<boolean>((r) => (resolve = r));
    const waiter: Waiter = { deviceId, cls, since, classify, resolve };
    signal.addEventListener(
      'abort',
      () => {
        if (!this.waiting.delete(waiter)) return;
        this.gauge();
        resolve(false);
      },
      { once: true },
    );
    this.waiting.add(waiter);
    this.gauge();
    this.scheduleReclassify();
    this.kick();
    return { admitted };
  }

  /**
   * Holds every admission until the returned release is called: a scan that claims many devices
   * puts them all in line first, so the first tokens go to the first in priority, not to the
   * first claimed.
   */
  hold(): () => void {
    this.holds++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds--;
      this.kick();
    };
  }

  /** Shutdown: nobody waiting is admitted any more. */
  close(): void {
    this.closed = true;
    clearTimeout(this.reclassifyTimer);
    for (const w of this.waiting) w.resolve(false);
    this.waiting.clear();
    this.gauge();
    this.kick();
  }

  private async classifySafely(
    deviceId: string,
    classify: () => Promise<ConnectClass>,
  ): Promise<ConnectClass> {
    try {
      return await classify();
    } catch (err) {
      // Unknown (Redis did not answer): not behind the idle ones, not ahead of an OTP.
      this.opts.logger.warn('connect priority not read', { deviceId, err: serializeError(err) });
      return 'queued';
    }
  }

  private kick(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
    if (!this.pumping && this.waiting.size > 0) void this.pump();
  }

  /** Sleeps `ms`, or until kicked (a hold released, a device in line, shutdown). */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }

  /** Admits the best waiting device each time both buckets have a token; one loop per gate. */
  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      while (!this.closed && this.waiting.size > 0) {
        if (this.holds > 0) {
          await this.sleep(1000);
          continue;
        }
        const localWait = this.localWaitMs();
        if (localWait > 0) {
          await this.sleep(localWait);
          continue;
        }
        const hostWait = await this.hostWaitMs();
        if (hostWait > 0) {
          await this.sleep(hostWait);
          continue;
        }
        const next = this.best();
        // Everyone left while the host answered: that token is spent, nobody opens with it.
        if (!next) break;
        if (this.opts.perSender.ratePerSecond > 0) this.tokens -= 1;
        this.admit(next);
      }
    } finally {
      this.pumping = false;
    }
  }

  /** How long until this sender's bucket has a token (0: it has one now). */
  private localWaitMs(): number {
    const { ratePerSecond, burst } = this.opts.perSender;
    if (ratePerSecond <= 0) return 0;
    const now = Date.now();
    this.tokens = Math.min(
      Math.max(1, burst),
      this.tokens + ((now - this.refilledAt) * ratePerSecond) / 1000,
    );
    this.refilledAt = now;
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) * 1000) / ratePerSecond);
  }

  /** Takes a token of the host's bucket: 0 when taken (or when Redis does not answer), else ms to wait. */
  private async hostWaitMs(): Promise<number> {
    const { host } = this.opts;
    if (!host) return 0;
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        host.take(),
        new Promise<number>((_, reject) => {
          // setImmediate: a timer that fires late (this process's event loop was busy, claiming a
          // thousand devices say) runs before the I/O that waited with it; Redis's answer, if it
          // came meanwhile, is read first and wins the race, so a busy sender does not open sockets
          // past the host's bound.
          timer = setTimeout(
            () => setImmediate(() => reject(new Error('the host connect bucket did not answer'))),
            HOST_TIMEOUT_MS,
          );
        }),
      ]);
    } catch (err) {
      // Redis away: this sender's own bound still holds; said once a minute at most.
      if (Date.now() - this.hostFailureLogged > 60_000) {
        this.hostFailureLogged = Date.now();
        this.opts.logger.warn("host connect rate not checked: admitting by this sender's rate alone", {
          err: serializeError(err),
        });
      }
      return 0;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The first in priority: the lowest class, then who waited longest. */
  private best(): Waiter | undefined {
    let best: Waiter | undefined;
    for (const w of this.waiting) {
      if (!best || RANK[w.cls] < RANK[best.cls] || (RANK[w.cls] === RANK[best.cls] && w.since < best.since))
        best = w;
    }
    return best;
  }

  private admit(w: Waiter): void {
    this.waiting.delete(w);
    this.gauge();
    const waitedMs = Date.now() - w.since;
    this.opts.metrics?.connectAdmitted.inc({ priority: w.cls });
    this.opts.metrics?.connectWaitSeconds.observe({ priority: w.cls }, waitedMs / 1000);
    if (w.cls === 'otp' && waitedMs >= this.longWaitMs) {
      this.opts.logger.warn('device with a queued OTP waited long to connect', {
        deviceId: w.deviceId,
        waitedMs,
      });
    } else {
      this.opts.logger.debug('device connect admitted', { deviceId: w.deviceId, priority: w.cls, waitedMs });
    }
    w.resolve(true);
  }

  private gauge(): void {
    this.opts.metrics?.connectWaiting.set(this.waiting.size);
  }

  /** While devices wait: their classes are read again, and a long wait is reported. */
  private scheduleReclassify(): void {
    if (this.reclassifyTimer || this.closed) return;
    this.reclassifyTimer = setTimeout(() => {
      void this.reclassify().finally(() => {
        this.reclassifyTimer = undefined;
        if (this.waiting.size > 0) this.scheduleReclassify();
      });
    }, this.reclassifyMs);
    this.reclassifyTimer.unref();
  }

  private async reclassify(): Promise<void> {
    const now = Date.now();
    const all = [...this.waiting];
    const oldest = all.reduce((min, w) => Math.min(min, w.since), now);
    if (now - oldest >= this.longWaitMs && now - this.lastLongWaitLog >= this.longWaitMs) {
      this.lastLongWaitLog = now;
      const byClass = Object.fromEntries(
        CONNECT_CLASSES.map((c) => [c, all.filter((w) => w.cls === c).length]),
      );
      this.opts.logger.warn('devices wait long for admission by the connect rate', {
        waiting: all.length,
        longestWaitMs: now - oldest,
        byPriority: byClass,
        ratePerSender: this.opts.perSender.ratePerSecond,
      });
    }
    // An OTP stays an OTP until its device is admitted; the others may have gained messages.
    const open = all.filter((w) => w.cls !== 'otp');
    for (let i = 0; i < open.length; i += CLASSIFY_PARALLEL) {
      await Promise.all(
        open.slice(i, i + CLASSIFY_PARALLEL).map(async (w) => {
          if (!this.waiting.has(w)) return;
          w.cls = await w.classify().catch(() => w.cls);
        }),
      );
    }
  }
}
