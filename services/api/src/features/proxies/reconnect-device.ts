import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import type { DeviceCommandClient } from '@mgw/store';
import { askHolder } from '../holder/index.js';

export interface ReconnectDeps {
  redis: RedisClient;
  /** The device commands to its holder (the API's one client). */
  commands: DeviceCommandClient;
}

/** How long a proxy change waits for the device's sender to start the reconnect. */
const RECONNECT_ASK_SECONDS = 5;

/**
 * What became of a proxy change now: `reconnecting` (the sender that holds the device is
 * reconnecting it through the new proxy), `not-connected` (no sender holds the device: its next
 * connection uses it), `unknown` (the holder did not answer in time: it reconnects when it hears
 * the command).
 */
export type Applied = 'reconnecting' | 'not-connected' | 'unknown';

/** Asks the device's holder to reconnect through its (new) proxy setting. */
export async function reconnectDevice(d: ReconnectDeps, deviceId: string): Promise<Applied> {
  // No lease, no holder: nothing to wait for (the device's next connection reads the new proxy).
  if (!(await d.redis.exists(keys.lease(deviceId)))) return 'not-connected';
  const outcome = await askHolder(
    { commands: d.commands },
    deviceId,
    { type: 'proxy-changed' },
    { wait: RECONNECT_ASK_SECONDS, okWithoutData: true },
  );
  if (outcome.ok) return 'reconnecting';
  return outcome.reason === 'no_device' ? 'not-connected' : 'unknown';
}
