import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { getRestriction, type CloudDeviceStore, type PoolStore } from '@mgw/store';
import type { EngineCache } from '../cloud-send/index.js';

export interface OtpFallbackDeps {
  redis: RedisClient;
  pools: Pick<PoolStore, 'list'>;
  cloudDevices: Pick<CloudDeviceStore, 'state'>;
  engines: Pick<EngineCache, 'engineOf'>;
  /** How long a message record is kept: the pointer to a fallback's record lives as long. */
  retentionSeconds: number;
}

/**
 * The device an OTP goes out through (docs/cloud-api.md "Pools and fallback"): the token's own,
 * unless it is a linked device WhatsApp pauses or restricts now (a reach-out time lock, a 463, a
 * 429, failures in a row) and a pool it is in has `otpFallback` on and a connected Cloud API
 * device — then that device sends the OTP as its authentication template, which no pause of the
 * linked account holds up. Pools by id, devices in the pool's order: the first connected cloud
 * device is chosen. A pool is one workspace's, so the device chosen is the token's workspace's.
 * Undefined: no fallback (the token's device sends it, held or not as it always was).
 */
export async function otpFallback(d: OtpFallbackDeps, deviceId: string): Promise<string | undefined> {
  // A restriction is read for a linked device only: a cloud device never falls back.
  if ((await d.engines.engineOf(deviceId)) === 'cloud') return undefined;
  if (!(await getRestriction(d.redis, deviceId))) return undefined;
  const pools = (await d.pools.list()).filter((p) => p.otpFallback && p.devices.includes(deviceId));
  for (const pool of pools)
    for (const other of pool.devices) {
      if (other === deviceId) continue;
      if ((await d.cloudDevices.state(other))?.status === 'connected') return other;
    }
  return undefined;
}

/**
 * Remembers that device `deviceId`'s OTP `messageId` was sent by `via` (its pool's cloud device),
 * whose record it is: GET /messages/:id with `deviceId`'s token follows this to it (get-message.ts).
 */
export async function rememberFallback(
  d: Pick<OtpFallbackDeps, 'redis' | 'retentionSeconds'>,
  deviceId: string,
  messageId: string,
  via: string,
): Promise<void> {
  await d.redis.set(keys.otpSentVia(deviceId, messageId), via, 'EX', d.retentionSeconds);
}
