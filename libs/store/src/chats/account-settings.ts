import type { RedisClient } from '@mgw/common';
import { ACCOUNT_SETTINGS_DEFAULTS, keys, type AccountSettings } from '@mgw/contracts';
import { storageContext } from '../encryption/families.js';
import type { Sealer } from '../encryption/sealer.js';

/**
 * The device's account settings (GET/PATCH /settings): calls rejected automatically (and the text
 * the caller is answered with, sealed: it is message text), incoming messages marked read
 * automatically, and the history sync kept at link time. Fields of the device's settings hash (`keys.deviceSettings`, beside the policy
 * overrides and opt-out settings; it is the device's own and holds a bounded set of fields).
 */
const FIELDS = ['rejectCalls', 'rejectCallMessage', 'autoMarkRead', 'historySync'] as const;

export async function readAccountSettings(
  redis: RedisClient,
  sealer: Sealer,
  deviceId: string,
): Promise<AccountSettings> {
  const key = keys.deviceSettings(deviceId);
  const [rejectCalls, message, autoMarkRead, historySync] = await redis.hmget(key, ...FIELDS);
  return {
    rejectCalls: rejectCalls === null ? ACCOUNT_SETTINGS_DEFAULTS.rejectCalls : rejectCalls === '1',
    rejectCallMessage: message ? sealer.openText(message, storageContext(key, 'rejectCallMessage')) : null,
    autoMarkRead: autoMarkRead === null ? ACCOUNT_SETTINGS_DEFAULTS.autoMarkRead : autoMarkRead === '1',
    historySync: historySync === null ? ACCOUNT_SETTINGS_DEFAULTS.historySync : historySync === '1',
  };
}

/** Stores a validated change (`accountSettingsBodySchema`): given fields change, null resets one. */
export async function writeAccountSettings(
  redis: RedisClient,
  sealer: Sealer,
  deviceId: string,
  change: { [K in keyof AccountSettings]?: AccountSettings[K] | null },
): Promise<AccountSettings> {
  const key = keys.deviceSettings(deviceId);
  const tx = redis.multi();
  for (const field of FIELDS) {
    const v = change[field];
    if (v === undefined) continue;
    if (v === null) tx.hdel(key, field);
    else if (typeof v === 'boolean') tx.hset(key, field, v ? '1' : '0');
    else tx.hset(key, field, sealer.sealText(v, storageContext(key, field)));
  }
  await tx.exec();
  return readAccountSettings(redis, sealer, deviceId);
}
