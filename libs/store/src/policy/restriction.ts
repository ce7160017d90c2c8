/**
 * A device's pause (`keys.deviceRestriction`): the sender starts it when WhatsApp pushes back
 * (services/sender/src/device/device-restriction.ts), every message of the device is held while it
 * lasts, the admin API may end it early, and GET /status shows it. It lives in Redis, so whichever
 * sender holds the device honours it, and it expires at its end.
 */
import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';

/** Why a device's sending is paused. */
export const RESTRICTION_REASONS = {
  /** WhatsApp's reach-out time lock (ack 463 with an active lock, or its notification). */
  reachoutTimelock: 'reachout_timelock',
  /** Ack 463 with no lock: the new-chat cap is reached or the account is restricted. */
  accountRestricted: 'account_restricted',
  /** Ack 429 (rate-overlimit). */
  rateLimited: 'rate_limited',
  /** Several sends in a row failed. */
  failures: 'repeated_failures',
} as const;
export type RestrictionReason = (typeof RESTRICTION_REASONS)[keyof typeof RESTRICTION_REASONS];

export interface Restriction {
  reason: RestrictionReason;
  /** Epoch ms when sending resumes. */
  until: number;
  /** Epoch ms when the pause began. */
  since: number;
}

export async function getRestriction(redis: RedisClient, deviceId: string, now = Date.now()) {
  const h = await redis.hgetall(keys.deviceRestriction(deviceId));
  if (!h.reason || !(Number(h.until) > now)) return undefined;
  return { reason: h.reason as RestrictionReason, until: Number(h.until), since: Number(h.since) };
}

/**
 * Pauses the device's sending until `until` (a later end wins over an earlier one). Returns the
 * restriction now in force, and whether it is new (there was none before).
 * The one place a device becomes restricted: hook state-change events here.
 */
export async function markRestricted(
  redis: RedisClient,
  deviceId: string,
  reason: RestrictionReason,
  until: number,
  now = Date.now(),
): Promise<{ restriction: Restriction; started: boolean }> {
  const before = await getRestriction(redis, deviceId, now);
  const restriction: Restriction = {
    reason: before && before.until > until ? before.reason : reason,
    until: Math.max(until, before?.until ?? 0),
    since: before?.since ?? now,
  };
  const key = keys.deviceRestriction(deviceId);
  await redis
    .multi()
    .hset(
      key,
      'reason',
      restriction.reason,
      'until',
      String(restriction.until),
      'since',
      String(restriction.since),
    )
    .pexpireat(key, restriction.until)
    .exec();
  return { restriction, started: !before };
}

/** Ends the device's pause now; true when there was one. The one place a restriction ends. */
export async function clearRestriction(redis: RedisClient, deviceId: string): Promise<boolean> {
  return (await redis.del(keys.deviceRestriction(deviceId))) === 1;
}
