import type { RedisClient } from '@mgw/common';
import {
  BROKER_SETTING_HISTORY,
  BROKER_TRANSPORTS,
  defaultBrokerSetting,
  keys,
  type BrokerDeviceSetting,
  type BrokerSettingHistory,
  type BrokerSettings,
} from '@mgw/contracts';
import { storeScript } from '../lua.js';

const SET = storeScript<number>('broker-settings-set-2');

/**
 * A device's broker settings (`keys.brokerSettings`, one JSON field per transport), set by
 * PUT /events/brokers and read by the notifier's relay. Only on/off and event types: the broker's
 * address is the operator's (env), never a device's. A transport without a field has its default
 * (`defaultBrokerSetting`: on for every event, off for an opt-in transport such as SQS).
 *
 * Each change is bound to the device's event log: a field holds, besides `enabled` and `events`,
 * the log id the setting governs after (`after`: the log's last id when it was set) and the
 * settings before it (`history`, at most BROKER_SETTING_HISTORY), so the relay publishes an event
 * iff the setting in force when it was logged wanted it, however long it waited in the log (a
 * broker down; the log keeps 24 h). A field without them (a device that never changed it since,
 * or one written by a release before boundaries) governs every event, and is upgraded in place at
 * its next change. The API's answers hold `enabled` and `events` only.
 */
export class BrokerSettingsStore {
  constructor(private readonly redis: RedisClient) {}

  /** Every transport's setting in force for the device, defaults filled in (the API's answer). */
  async get(deviceId: string): Promise<BrokerSettings> {
    const raw = await this.redis.hgetall(keys.brokerSettings(deviceId));
    const out = {} as BrokerSettings;
    for (const t of BROKER_TRANSPORTS) out[t] = parseHistory(raw[t], t).current;
    return out;
  }

  /**
   * One transport's setting with the earlier ones and their boundaries (one HGET: the relay reads
   * it per page, after the page, and judges each event with `brokerWantsAt`).
   */
  async history(deviceId: string, transport: string): Promise<BrokerSettingHistory> {
    return parseHistory(await this.redis.hget(keys.brokerSettings(deviceId), transport), transport);
  }

  /**
   * Sets the given transports' settings; the others keep theirs. One script reads the log's last
   * id and writes each change with it as its boundary, the setting before it kept in its history.
   */
  async set(deviceId: string, settings: Partial<BrokerSettings>): Promise<BrokerSettings> {
    const args: string[] = [];
    for (const t of BROKER_TRANSPORTS) {
      const s = settings[t];
      if (s)
        args.push(
          t,
          JSON.stringify({ enabled: s.enabled, ...(s.events ? { events: s.events } : {}) }),
          JSON.stringify(defaultBrokerSetting(t)),
        );
    }
    if (args.length)
      await SET.run(
        this.redis,
        [keys.brokerSettings(deviceId), keys.eventLog(deviceId)],
        [BROKER_SETTING_HISTORY, ...args],
      );
    return this.get(deviceId);
  }

  /** Forgets the device's settings (back to the default). */
  async clear(deviceId: string): Promise<void> {
    await this.redis.del(keys.brokerSettings(deviceId));
  }
}

interface StoredSetting {
  enabled?: unknown;
  events?: unknown;
  after?: unknown;
  history?: unknown;
}

/** A stored setting as the relay and the API read it: enabled unless it says false; `events` when a list. */
function settingOf(v: StoredSetting): BrokerDeviceSetting {
  return {
    enabled: v.enabled !== false,
    ...(Array.isArray(v.events) ? { events: v.events as BrokerDeviceSetting['events'] } : {}),
  };
}

const afterOf = (v: StoredSetting): { after?: string } =>
  typeof v.after === 'string' ? { after: v.after } : {};

function parseHistory(raw: string | null | undefined, transport: string): BrokerSettingHistory {
  let v: StoredSetting | undefined;
  try {
    if (raw) v = JSON.parse(raw) as StoredSetting;
  } catch {
    v = undefined;
  }
  if (!v || typeof v !== 'object') return { current: defaultBrokerSetting(transport), past: [] };
  const past = Array.isArray(v.history)
    ? (v.history as unknown[])
        .filter((h): h is StoredSetting => !!h && typeof h === 'object')
        .map((h) => ({ setting: settingOf(h), ...afterOf(h) }))
    : [];
  return { current: settingOf(v), ...afterOf(v), past };
}
