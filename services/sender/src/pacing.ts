import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';

const SETTINGS_TTL_MS = 5000;

/**
 * A per-device minimum gap between messages, with jitter, so a long list does not look like a
 * bot burst to WhatsApp. `sendGapMs` in `keys.deviceSettings(deviceId)` overrides the default;
 * 0 disables pacing (benchmarks, sandbox).
 */
export class Pacer {
  private lastSentAt = 0;
  private override: { value: number | undefined; readAt: number } = { value: undefined, readAt: 0 };
  private chain: Promise<void> = Promise.resolve();
  private readonly released = new AbortController();

  constructor(
    private readonly redis: RedisClient,
    private readonly deviceId: string,
    private readonly defaultGapMs: number,
    private readonly jitterMs: number,
  ) {}

  async gapMs(): Promise<number> {
    if (Date.now() - this.override.readAt > SETTINGS_TTL_MS) {
      const raw = await this.redis.hget(keys.deviceSettings(this.deviceId), 'sendGapMs').catch(() => null);
      const n = raw === null ? NaN : Number(raw);
      this.override = { value: Number.isFinite(n) && n >= 0 ? n : undefined, readAt: Date.now() };
    }
    return this.override.value ?? this.defaultGapMs;
  }

  /** Resolves when the next message may go; callers are served one after another. */
  async wait(): Promise<void> {
    const gap = await this.gapMs();
    if (gap === 0 || this.released.signal.aborted) return;
    const turn = this.chain.then(async () => {
      const due = this.lastSentAt + gap + Math.random() * this.jitterMs;
      const delay = due - Date.now();
      if (delay > 0 && !this.released.signal.aborted) await sleep(delay, this.released.signal);
      this.lastSentAt = Date.now();
    });
    this.chain = turn.catch(() => undefined);
    await turn;
  }

  /** Lets every waiting job through at once (the device is retired: they only need to fail). */
  release(): void {
    this.released.abort();
  }
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
