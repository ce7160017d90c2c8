/**
 * The counters behind the send limits, pure (the clock is passed in).
 *
 * - Throughput: messages per second per business number, 80 by default
 *   (https://developers.facebook.com/documentation/business-messaging/whatsapp/throughput); over it, 130429.
 * - Pair rate: messages from one business number to one user in a short time; over it, 131056.
 *   The reference puts it at about one message every 6 seconds with short bursts allowed, without
 *   a burst size: the simulator allows `limit` messages per sliding `windowMs` (README).
 * - Messaging limit: unique users reached outside a customer service window in a moving 24 hours
 *   (https://developers.facebook.com/documentation/business-messaging/whatsapp/messaging-limits).
 */

/** At most `limit` events per sliding `windowMs` per key (the limit is given with each check). */
export class SlidingWindowLimiter {
  private readonly events = new Map<string, number[]>();

  constructor(private readonly windowMs: number) {}

  private recent(key: string, now: number): number[] {
    const kept = (this.events.get(key) ?? []).filter((t) => now - t < this.windowMs);
    if (kept.length === 0) this.events.delete(key);
    else this.events.set(key, kept);
    return kept;
  }

  /** Whether one more event under `key` at `now` would stay within `limit`. */
  allows(key: string, limit: number, now: number): boolean {
    return this.recent(key, now).length < limit;
  }

  /** Counts an event under `key` at `now`. */
  record(key: string, now: number): void {
    const kept = this.recent(key, now);
    kept.push(now);
    this.events.set(key, kept);
  }
}

/** Unique recipients per key over a moving period: a recipient counts from its last send on. */
export class UniqueRecipients {
  private readonly seen = new Map<string, Map<string, number>>();

  constructor(private readonly periodMs = 24 * 60 * 60 * 1000) {}

  private current(key: string, now: number): Map<string, number> {
    const recipients = this.seen.get(key) ?? new Map<string, number>();
    for (const [who, at] of recipients) if (now - at >= this.periodMs) recipients.delete(who);
    this.seen.set(key, recipients);
    return recipients;
  }

  /** Whether sending to `recipient` keeps `key` within `limit` unique recipients. */
  allows(key: string, recipient: string, limit: number, now: number): boolean {
    const recipients = this.current(key, now);
    return recipients.has(recipient) || recipients.size < limit;
  }

  record(key: string, recipient: string, now: number): void {
    this.current(key, now).set(recipient, now);
  }

  count(key: string, now: number): number {
    return this.current(key, now).size;
  }
}

/** The messaging limit of each tier name (`messaging_limit_tier`), Infinity for unlimited. */
export const TIER_LIMITS = {
  TIER_50: 50,
  TIER_250: 250,
  TIER_1K: 1_000,
  TIER_2K: 2_000,
  TIER_10K: 10_000,
  TIER_100K: 100_000,
  TIER_UNLIMITED: Infinity,
} as const;
export type MessagingTier = keyof typeof TIER_LIMITS;
export const isTier = (value: unknown): value is MessagingTier =>
  typeof value === 'string' && Object.hasOwn(TIER_LIMITS, value);
