import type { RedisClient } from '@mgw/common';
import { keys, type CloudDeviceInput } from '@mgw/contracts';
import { CloudNumberTakenError, isPairingRunning, readPairing, type CloudDeviceStore } from '@mgw/store';
import { checkNumber, type GraphRefused, type GraphUnreachable, type NumberGraph } from './check-number.js';
import { showCloud, type CloudShown } from './show-cloud.js';

/** What the cloud use cases work with: the store of cloud devices, the Graph API, Redis. */
export interface CloudDeps {
  redis: RedisClient;
  cloudDevices: Pick<
    CloudDeviceStore,
    'engineOf' | 'get' | 'set' | 'forget' | 'profile' | 'keepProfile' | 'state' | 'setState'
  >;
  graph: NumberGraph;
}

/** The device is linked by QR or pairing code, or a pairing of it runs: it cannot be a cloud number too. */
export interface DeviceLinked {
  ok: false;
  reason: 'device_linked';
}

/** Another device already is this phone-number id. */
export interface NumberTaken {
  ok: false;
  reason: 'number_taken';
}

export type ConfigureOutcome =
  { ok: true; data: CloudShown } | DeviceLinked | NumberTaken | GraphRefused | GraphUnreachable;

/**
 * PUT /cloud: makes the device this Cloud API number. Refused while the device is linked by QR or
 * code (its credentials exist, or a pairing runs): one device, one engine. The credentials are
 * checked with the Graph API first — nobody claims a number whose token they do not hold — then
 * stored sealed, with what the number said of itself. Its state is left as it was: a new device is
 * `disconnected` until /connect; one already connected stays so (its new token just passed).
 */
export async function configureCloud(
  d: CloudDeps,
  deviceId: string,
  input: CloudDeviceInput,
  now = new Date(),
): Promise<ConfigureOutcome> {
  if (await linkedByCode(d.redis, deviceId)) return { ok: false, reason: 'device_linked' };
  const checked = await checkNumber(d.graph, input, now);
  if (!checked.ok) return checked;
  try {
    await d.cloudDevices.set(deviceId, input, now);
  } catch (err) {
    if (err instanceof CloudNumberTakenError) return { ok: false, reason: 'number_taken' };
    throw err;
  }
  await d.cloudDevices.keepProfile(deviceId, checked.profile);
  return { ok: true, data: (await showCloud(d, deviceId))! };
}

/**
 * Whether the device is linked by QR or pairing code: it has credentials of the linked-device
 * protocol (a finished link, or a pairing's half-made ones), or a pairing of it is running.
 */
export async function linkedByCode(redis: RedisClient, deviceId: string): Promise<boolean> {
  if ((await redis.exists(keys.authCreds(deviceId))) === 1) return true;
  return isPairingRunning(await readPairing(redis, deviceId));
}
