/**
 * The Cloud API's rates a cloud device keeps in this process (it holds the device's lease, so no
 * other process sends for the number meanwhile): the number's throughput and the pair rate to one
 * contact. In memory on purpose: a handover starts them afresh, which at worst lets one burst
 * through that Meta refuses (130429, 131056: retried, and a pair-rate refusal waits for its slot).
 */

/** Meta counts a number's throughput per second. */
const SECOND_MS = 1000;
/**
 * A send is counted by Meta when it arrives, by us when it leaves: a small margin keeps two sends
 * a second apart here from landing in one of Meta's seconds after a little network jitter.
 */
const ARRIVAL_MARGIN_MS = 25;

/**
 * The number's throughput: at most `perSecond` sends in any second. A token bucket whose tokens
 * each come back one second after they were taken — unlike a bucket that refills continuously,
 * it never lets two seconds' worth through within one (a full bucket plus its refill), which Meta
 * would refuse. Callers wait in turn (the worker runs many sends at once).
 */
export class ThroughputBucket {
  /** When each token still out was taken (ms), oldest first. */
  private readonly taken: number[] = [];
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private perSecond: number,
    private readonly now: () => number = Date.now,
    private readonly sleep: (ms: number) => Promise<void> = (ms) =>
      new Promise((resolve) => setTimeout(resolve, ms)),
  ) {}

  /** A new rate (the configuration changed): applies from the next token. */
  setRate(perSecond: number): void {
    this.perSecond = Math.max(1, perSecond);
  }

  /** Resolves when a send may go now. */
  take(): Promise<void> {
    const turn = this.chain.then(async () => {
      for (;;) {
        const now = this.now();
        while (this.taken.length > 0 && this.taken[0]! <= now - SECOND_MS - ARRIVAL_MARGIN_MS)
          this.taken.shift();
        if (this.taken.length < this.perSecond) break;
        await this.sleep(this.taken[0]! + SECOND_MS + ARRIVAL_MARGIN_MS - now);
      }
      this.taken.push(this.now());
    });
    this.chain = turn.catch(() => undefined);
    return turn;
  }
}

/**
 * The pair rate: Meta allows about one message every 6 seconds to one contact, with bursts, and
 * names no burst size. **Choice:** at most `limit` messages to one contact in any `windowMs`
 * (10 a minute: a burst of 10, then one every 6 s), as libs/cloud-sim enforces it. A message over
 * it waits (held) for its slot instead of failing: it is a pace, not a refusal.
 */
export class PairRate {
  private readonly sent = new Map<string, number[]>();

  constructor(
    private readonly limit = 10,
    private readonly windowMs = 60_000,
  ) {}

  /**
   * Takes a slot for a message to `waId` now, or answers when its next slot opens (ms) and takes
   * nothing. Synchronous: the check and the take cannot interleave with another send's.
   */
  take(waId: string, now: number): number | undefined {
    if (this.sent.size > 10_000) this.sweep(now);
    const times = (this.sent.get(waId) ?? []).filter((t) => t > now - this.windowMs);
    if (times.length >= this.limit) {
      this.sent.set(waId, times);
      return times[0]! + this.windowMs;
    }
    times.push(now);
    this.sent.set(waId, times);
    return undefined;
  }

  /** Forgets the contacts with no message in the window (a long list's recipients). */
  private sweep(now: number): void {
    for (const [waId, times] of this.sent)
      if (times.every((t) => t <= now - this.windowMs)) this.sent.delete(waId);
  }
}

/** The unique contacts outside a window a messaging tier allows per moving 24 hours. */
export const TIER_LIMITS: Readonly<Record<string, number>> = {
  TIER_50: 50,
  TIER_250: 250,
  TIER_1K: 1000,
  TIER_2K: 2000,
  TIER_10K: 10_000,
  TIER_100K: 100_000,
  TIER_UNLIMITED: Infinity,
};
