import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';

/** The device's status settings, beside its policy overrides in `keys.deviceSettings`. */
const RECEIVE = 'receiveStatuses';

export interface StatusSettings {
  /** Contacts' status updates become `status.received` events (off by default). */
  receiveStatuses: boolean;
}

export async function readStatusSettings(redis: RedisClient, deviceId: string): Promise<StatusSettings> {
  return { receiveStatuses: (await redis.hget(keys.deviceSettings(deviceId), RECEIVE)) === 'true' };
}

export async function writeStatusSettings(
  redis: RedisClient,
  deviceId: string,
  settings: StatusSettings,
): Promise<void> {
  const key = keys.deviceSettings(deviceId);
  if (settings.receiveStatuses) await redis.hset(key, RECEIVE, 'true');
  else await redis.hdel(key, RECEIVE);
}
