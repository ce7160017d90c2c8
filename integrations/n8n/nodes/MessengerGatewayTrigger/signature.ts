import { createHmac, timingSafeEqual } from 'node:crypto';

/** How far `webhook-timestamp` may be from now, either way (Standard Webhooks' default). */
export const TOLERANCE_SECONDS = 5 * 60;

export interface SignedHeaders {
  id: unknown;
  timestamp: unknown;
  signature: unknown;
}

export type Verdict = { ok: true; id: string } | { ok: false; reason: string };

/**
 * Checks a delivery as Standard Webhooks signs it (what the gateway's notifier sends, docs/events.md):
 * `webhook-signature` holds one or more space-separated `v1,<base64 HMAC-SHA256>` (two during a
 * secret rotation), each over `<webhook-id>.<webhook-timestamp>.<raw body>` with the secret's bytes
 * (the base64 after `whsec_`) as the key, and the timestamp must be within five minutes of now.
 * The comparison is constant-time. Never throws: a verdict says why a delivery is refused.
 */
export function verifyDelivery(
  secret: string | undefined,
  headers: SignedHeaders,
  rawBody: Buffer,
  nowSeconds: number,
): Verdict {
  if (typeof secret !== 'string' || !secret.startsWith('whsec_')) {
    return { ok: false, reason: 'no webhook secret is stored for this trigger' };
  }
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  if (key.length === 0) return { ok: false, reason: 'the stored webhook secret is empty' };
  const { id, timestamp, signature } = headers;
  if (typeof id !== 'string' || id === '' || id.length > 256) return { ok: false, reason: 'no webhook-id' };
  if (typeof timestamp !== 'string' || !/^\d{1,12}$/.test(timestamp)) {
    return { ok: false, reason: 'no valid webhook-timestamp' };
  }
  if (Math.abs(nowSeconds - Number(timestamp)) > TOLERANCE_SECONDS) {
    return { ok: false, reason: 'webhook-timestamp is more than 5 minutes from now' };
  }
  if (typeof signature !== 'string' || signature === '' || signature.length > 4096) {
    return { ok: false, reason: 'no webhook-signature' };
  }
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(rawBody).digest();
  for (const part of signature.split(' ')) {
    const comma = part.indexOf(',');
    if (comma < 0 || part.slice(0, comma) !== 'v1') continue;
    const given = Buffer.from(part.slice(comma + 1), 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return { ok: true, id };
  }
  return { ok: false, reason: 'no signature matches' };
}

/**
 * The webhook ids seen lately, per workflow: the gateway delivers at least once (a retry after a
 * lost answer has the same `webhook-id`), and a captured delivery could be replayed within the five
 * minutes. Kept in this process's memory for `TOLERANCE_SECONDS` (a replay older than that fails
 * the timestamp check), at most 10,000 ids.
 */
export class RecentIds {
  private readonly seen = new Map<string, number>();

  constructor(private readonly max = 10_000) {}

  /** True the first time `key` is offered within the window; false for a repeat. */
  firstTime(key: string, nowMs: number): boolean {
    const until = this.seen.get(key);
    if (until !== undefined && until > nowMs) return false;
    if (this.seen.size >= this.max) {
      for (const [k, expires] of this.seen) if (expires <= nowMs) this.seen.delete(k);
      while (this.seen.size >= this.max) this.seen.delete(this.seen.keys().next().value as string);
    }
    this.seen.set(key, nowMs + TOLERANCE_SECONDS * 1000);
    return true;
  }
}
