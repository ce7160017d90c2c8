/**
 * What GET /status, the admin API and the sender's gauges show of a device's policy: its caps and
 * their use in the current window, the warm-up day, quiet hours, and the pause if there is one.
 */
import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { formatQuiet, type SendPolicyConfig } from './config.js';
import { effectivePolicy } from './device-settings.js';
import { getRestriction, type RestrictionReason } from './restriction.js';
import { capOf, capWindow, quietUntil } from './windows.js';

export interface SendingView {
  sentToday: number;
  firstContactsToday: number;
  /** null: no cap. */
  dailyCap: number | null;
  firstContactCap: number | null;
  otpReserve: number;
  /** Day of the warm-up (1 = the day the account was linked), while it lasts. */
  warmupDay?: number;
  quietHours?: string;
  timeZone: string;
  /** When the current window ends and the counters start again (ISO). */
  windowEndsAt: string;
  restriction?: { reason: RestrictionReason; until: string; since: string };
  /** When waiting messages go again: the restriction's end, or the end of quiet hours. */
  pausedUntil?: string;
}

export async function sendingView(
  redis: RedisClient,
  deviceId: string,
  config: SendPolicyConfig,
  now = Date.now(),
): Promise<SendingView> {
  const { policy, warmupFrom } = await effectivePolicy(redis, deviceId, config);
  const win = capWindow(now, config.windowMs, policy.timeZone);
  const [usage, restriction] = await Promise.all([
    redis.hmget(keys.deviceUsage(deviceId, win.start), 'sent', 'firstContacts'),
    getRestriction(redis, deviceId, now),
  ]);
  const { cap, warmupDay } = capOf(policy, win.start, config.windowMs, warmupFrom);
  const quiet = quietUntil(now, policy);
  const paused = Math.max(restriction?.until ?? 0, quiet ?? 0);
  const orNull = (n: number) => (n === Infinity || n === 0 ? null : n);
  return {
    sentToday: Math.max(0, Number(usage[0] ?? 0)),
    firstContactsToday: Math.max(0, Number(usage[1] ?? 0)),
    dailyCap: orNull(cap),
    firstContactCap: orNull(policy.firstContactCap),
    otpReserve: policy.otpReserve,
    ...(warmupDay !== undefined ? { warmupDay } : {}),
    ...(policy.quietHours ? { quietHours: formatQuiet(policy.quietHours) } : {}),
    timeZone: policy.timeZone,
    windowEndsAt: new Date(win.end).toISOString(),
    ...(restriction
      ? {
          restriction: {
            reason: restriction.reason,
            until: new Date(restriction.until).toISOString(),
            since: new Date(restriction.since).toISOString(),
          },
        }
      : {}),
    ...(paused > now ? { pausedUntil: new Date(paused).toISOString() } : {}),
  };
}
