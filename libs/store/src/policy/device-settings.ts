/**
 * A device's own settings (`keys.deviceSettings`): the policy fields an operator overrode through
 * the admin API, stored as strings, and when the device's warm-up started.
 */
import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import {
  isTimeZone,
  parseCaps,
  parseQuiet,
  POLICY_FIELDS,
  type PolicyOverride,
  type SendPolicy,
  type SendPolicyConfig,
} from './config.js';

/** The device's overrides as stored (strings), for the admin API. */
export async function readOverrides(redis: RedisClient, deviceId: string): Promise<Record<string, unknown>> {
  return parseOverrides(await redis.hgetall(keys.deviceSettings(deviceId)));
}

function parseOverrides(raw: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of POLICY_FIELDS) {
    const v = raw[field];
    if (v === undefined) continue;
    if (field === 'warmupCaps') out[field] = parseCaps(v);
    else if (field === 'quietHours' || field === 'timeZone') out[field] = v;
    else if (field === 'typing') out[field] = v === 'true';
    else out[field] = Number(v);
  }
  return out;
}

/** Stores a validated override (see `policyOverrideSchema`). */
export async function writeOverrides(
  redis: RedisClient,
  deviceId: string,
  o: PolicyOverride,
  now = Date.now(),
) {
  const key = keys.deviceSettings(deviceId);
  const tx = redis.multi();
  for (const field of POLICY_FIELDS) {
    const v = o[field];
    if (v === undefined) continue;
    if (v === null) tx.hdel(key, field);
    else tx.hset(key, field, Array.isArray(v) ? (v.length ? v.join(',') : 'off') : String(v));
  }
  // Ending the warm-up moves its start far enough back; restarting it starts it now.
  if (o.restartWarmup !== undefined) tx.hset(key, 'warmupFrom', String(o.restartWarmup ? now : 0));
  await tx.exec();
}

/** The device's effective policy and when its warm-up started (ms; undefined = not yet known). */
export async function effectivePolicy(
  redis: RedisClient,
  deviceId: string,
  config: SendPolicyConfig,
): Promise<{ policy: SendPolicy; warmupFrom?: number; sendGapMs?: number }> {
  const settings = await redis.hgetall(keys.deviceSettings(deviceId));
  const raw = parseOverrides(settings);
  const warmupFrom = settings.warmupFrom ?? null;
  const d = config.defaults;
  const policy: SendPolicy = {
    dailyCap: (raw.dailyCap as number | undefined) ?? d.dailyCap,
    warmupCaps: (raw.warmupCaps as number[] | undefined) ?? d.warmupCaps,
    firstContactCap: (raw.firstContactCap as number | undefined) ?? d.firstContactCap,
    otpReserve: (raw.otpReserve as number | undefined) ?? d.otpReserve,
    quietHours: raw.quietHours !== undefined ? parseQuiet(raw.quietHours as string) : d.quietHours,
    timeZone:
      raw.timeZone !== undefined && isTimeZone(raw.timeZone as string)
        ? (raw.timeZone as string)
        : d.timeZone,
  };
  return {
    policy,
    warmupFrom: warmupFrom === null ? undefined : Number(warmupFrom),
    sendGapMs: raw.sendGapMs as number | undefined,
  };
}

/**
 * A new link starts the device's warm-up (called when the phone confirmed the pairing). Devices
 * linked before there was a warm-up have no start and get the daily cap.
 */
export async function startWarmup(redis: RedisClient, deviceId: string, now = Date.now()): Promise<void> {
  await redis.hset(keys.deviceSettings(deviceId), 'warmupFrom', String(now));
}
