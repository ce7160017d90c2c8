import { keys } from '@mgw/contracts';
import type { CloudDeps } from './configure-cloud.js';

/**
 * /disconnect (and DELETE /cloud) of a cloud device: forgets its configuration — the token and
 * secrets with it — and takes it off the senders' roster. Its id is announced on
 * `keys.devicesChannel()`: the sender that holds it finds no configuration any more and lets it go
 * (no device command stops a device without logging it out at WhatsApp, which a cloud number has
 * no need of). False when the device held no cloud configuration.
 */
export async function disconnectCloud(
  d: Pick<CloudDeps, 'redis' | 'cloudDevices'>,
  deviceId: string,
): Promise<boolean> {
  const forgot = await d.cloudDevices.forget(deviceId);
  if (!forgot) return false;
  await d.redis.srem(keys.linkedDevices(), deviceId);
  await d.redis.publish(keys.devicesChannel(), deviceId);
  return true;
}
