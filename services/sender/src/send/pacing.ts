import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';

/** How long a pacer keeps the device's settings it read (its gap, typing) before reading them again. */
export const SETTINGS_TTL_MS = 5000;

/** Something shown before a paced message (its "typing…"): up to `ms`; `start` begins it. */
export interface Lead {
  ms: number;
  /** Cut shorter than this (a late turn), it is not shown at all. */
  minMs?: number;
  /**
   * Whether a message that finds its device idle waits for it (true: a message of its own, typed
   * as a person types a reply) or goes at once without it (false: a list's first message — a
   * list's pace is its gaps, from its acceptance on, and there is no gap to fill yet).
   */
  whenIdle?: boolean;
  start: () => void;
}

/**
 * A per-device minimum gap between messages, with jitter, so a long batch does not look like a
 * bot burst to WhatsApp. `sendGapMs` in `keys.deviceSettings(deviceId)` overrides the default;
 * 0 disables pacing (benchmarks, sandbox).
 *
 * The gap holds across owners: the first turn here starts from the device's last claim, wherever
 * it was made (`keys.devicePace`, written by the claim script), so a sender that takes the device
 * over after a failover, a hand-over or a restart does not send its first message early.
 */
export class Pacer {
  private lastSentAt = 0;
  /** Read once, before the first turn: the device's last claim by any sender. */
  private seeded: Promise<void> | undefined;
  private override: { value: number | undefined; typing: boolean; readAt: number } = {
    value: undefined,
    typing: true,
    readAt: 0,
  };
  /** The settings' read in flight, if one is. */
  private reading: Promise<void> | undefined;
  private chain: Promise<void> = Promise.resolve();
  private readonly released = new AbortController();
  /** When the message waiting for its turn is due on schedule (undefined: none waits). */
  private waitingDue: number | undefined;
  /** The latest any message went past its due time since the last `takeLagMs`, if one went. */
  private windowLateMs: number | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly deviceId: string,
    private readonly defaultGapMs: number,
    private readonly jitterMs: number,
  ) {}

  async gapMs(): Promise<number> {
    // A read in flight is shared: a job asks for the gap with its state and again before its claim.
    if (Date.now() - this.override.readAt > SETTINGS_TTL_MS)
      await (this.reading ??= this.readSettings().finally(() => (this.reading = undefined)));
    return this.override.value ?? this.defaultGapMs;
  }

  private async readSettings(): Promise<void> {
    const [raw, typing] = await this.redis
      .hmget(keys.deviceSettings(this.deviceId), 'sendGapMs', 'typing')
      .catch(() => [null, null]);
    const n = raw === null || raw === undefined ? NaN : Number(raw);
    this.override = {
      value: Number.isFinite(n) && n >= 0 ? n : undefined,
      typing: typing !== 'false',
      readAt: Date.now(),
    };
  }

  private async seed(): Promise<void> {
    // Unreadable (Redis away): pace from nothing, as before; the claim will fail anyway.
    const raw = await this.redis.get(keys.devicePace(this.deviceId)).catch(() => null);
    const at = Number(raw);
    // A time in the future (another host's clock ahead) counts as now: never a longer wait than a gap.
    if (raw && Number.isFinite(at)) this.lastSentAt = Math.max(this.lastSentAt, Math.min(at, Date.now()));
  }

  /** Whether the device shows "typing…" before a paced text (policy `typing`, on by default). */
  async typing(): Promise<boolean> {
    await this.gapMs();
    return this.override.typing;
  }

  /**
   * Resolves when the next message may go; callers are served one after another. `readyAt` (ms):
   * since when the message could go (its job reached this worker); its slot is the later of that
   * and the end of the gap after the previous one (its time plus the gap and jitter).
   *
   * `lead`: "typing…" before it (`start` runs when it begins): it fills the end of the gap, at most
   * `lead.ms` (and never more than the gap), and never makes the message later than its slot. A
   * turn that began after the typing should have started (a sender short of CPU reaches the message
   * late) shortens it to what is left of the gap; less than `lead.minMs` left, none is shown.
   * Starting it earlier is not possible: the message (its recipient, its text) is known only once
   * the worker reaches it, one job at a time per paced device. After an idle spell (the message
   * became ready only once the gap was over) the typing is planned: the message waits for it —
   * unless the lead says otherwise (`whenIdle: false`, a list's first message: it goes at once).
   *
   * How late the turn went is its lag (takeLagMs): past its due time, or, with typing, past the
   * time the typing was due to start (within the gap once the message was ready) — a turn that
   * began late counts the same as when the typing still pushed the message back.
   */
  async wait(lead?: Lead, readyAt?: number): Promise<void> {
    const gap = await this.gapMs();
    if (gap === 0 || this.released.signal.aborted) return;
    await (this.seeded ??= this.seed());
    const called = Date.now();
    const turn = this.chain.then(async () => {
      const turnStart = Date.now();
      const ready = readyAt ?? called;
      const gapEnd = this.lastSentAt + gap + Math.random() * this.jitterMs;
      const idle = ready >= gapEnd;
      const leadMs = lead && (!idle || lead.whenIdle !== false) ? Math.min(lead.ms, gap) : 0;
      // Idle: typed from the turn's start (a person types before sending); else the slot holds.
      const due = idle ? turnStart + leadMs : gapEnd;
      // On schedule: the typing starts within the gap once the message is ready, the message goes
      // when it ends (idle) or at the end of the gap.
      const typingDue = Math.max(gapEnd - leadMs, ready);
      const sendDue = idle ? ready + leadMs : gapEnd;
      this.waitingDue = sendDue;
      const before = due - leadMs - Date.now();
      if (before > 0 && !this.released.signal.aborted) await sleep(before, this.released.signal);
      const left = due - Date.now();
      const shown = lead && leadMs > 0 && left > 0 && left >= Math.min(lead.minMs ?? 0, leadMs);
      if (shown && !this.released.signal.aborted) lead.start();
      if (left > 0 && !this.released.signal.aborted) await sleep(left, this.released.signal);
      this.lastSentAt = Date.now();
      this.waitingDue = undefined;
      // Behind schedule: the message past its due time (a turn that began after it, a wake-up that
      // overshot), or its typing's start past when it was due (it was cut short, or skipped).
      const late = Math.max(this.lastSentAt - sendDue, lead && leadMs > 0 ? turnStart - typingDue : 0);
      this.windowLateMs = Math.max(this.windowLateMs ?? 0, Math.max(0, late));
    });
    this.chain = turn.catch(() => undefined);
    await turn;
  }

  /**
   * How far behind its paced schedule the device is (ms): the latest a message went past its due
   * time since the last call, or how long the one waiting now is overdue; undefined when no paced
   * message went or waits (an idle device, pacing off). Starts a new window.
   */
  takeLagMs(now = Date.now()): number | undefined {
    const waiting = this.waitingDue === undefined ? undefined : Math.max(0, now - this.waitingDue);
    const lag =
      waiting === undefined && this.windowLateMs === undefined
        ? undefined
        : Math.max(waiting ?? 0, this.windowLateMs ?? 0);
    this.windowLateMs = undefined;
    return lag;
  }

  /** Lets every waiting job through at once (the device is retired: they only need to fail). */
  release(): void {
    this.released.abort();
  }
}

/**
 * Since when a send job could have gone (ms), for the pacer's lag: when it was queued, if it went
 * straight to the queue and has waited there since — a device's backlog on a sender short of CPU
 * then counts as late, not only the overshoot of each turn. A job that was delayed at some point
 * (scheduled, held by a cap, quiet hours or a pause, retried, handed back) could go only once this
 * run of it started.
 */
export function readySince(job: {
  timestamp: number;
  delay: number;
  processedOn?: number;
}): number | undefined {
  return job.delay > 0 ? job.processedOn : job.timestamp;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
