import type { RedisClient } from '@mgw/common';
import {
  clearRestriction,
  readOverrides,
  sendingView,
  writeOverrides,
  type PolicyOverride,
  type SendPolicyConfig,
  type SendQueue,
} from '@mgw/store';

export interface PolicyDeps {
  redis: RedisClient;
  config: SendPolicyConfig;
  queueOf: (deviceId: string) => SendQueue;
}

/** The device's overrides (what differs from the defaults) and what is in force now, with usage. */
export async function devicePolicy(d: PolicyDeps, deviceId: string) {
  const [overrides, sending] = await Promise.all([
    readOverrides(d.redis, deviceId),
    sendingView(d.redis, deviceId, d.config),
  ]);
  return { deviceId, overrides, sending };
}

/**
 * Overrides some fields of the device's sending policy (null removes an override; `restartWarmup`
 * restarts or ends the warm-up). The sender reads the policy for every message, so it applies to
 * the next one.
 */
export async function changePolicy(
  d: PolicyDeps,
  deviceId: string,
  override: PolicyOverride,
): Promise<Awaited<ReturnType<typeof devicePolicy>>> {
  await writeOverrides(d.redis, deviceId, override);
  // Held messages look again now (a raised cap lets them go at once).
  await d.queueOf(deviceId).promoteJobs();
  return devicePolicy(d, deviceId);
}

/**
 * Ends the device's pause now (the operator knows better; if WhatsApp still pushes back, the next
 * refused message pauses it again). `cleared`: whether it was paused.
 */
export async function endRestriction(
  d: PolicyDeps,
  deviceId: string,
): Promise<Awaited<ReturnType<typeof devicePolicy>> & { cleared: boolean }> {
  const cleared = await clearRestriction(d.redis, deviceId);
  if (cleared) await d.queueOf(deviceId).promoteJobs();
  return { ...(await devicePolicy(d, deviceId)), cleared };
}
