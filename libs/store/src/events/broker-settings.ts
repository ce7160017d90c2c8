import type { RedisClient } from '@mgw/common';
import {
  BROKER_TRANSPORTS,
  defaultBrokerSetting,
  keys,
  type BrokerDeviceSetting,
  type BrokerSettings,
} from '@mgw/contracts';

/**
 * A device's broker settings (`keys.brokerSettings`, one JSON field per transport), set by
 * PUT /events/brokers and read by the notifier's relay. Only on/off and event types: the broker's
 * address is the operator's (env), never a device's. A transport without a field has its default
 * (`defaultBrokerSetting`: on for every event, off for an opt-in transport such as SQS).
 */
export class BrokerSettingsStore {
  constructor(private readonly redis: RedisClient) {}

  /** Every transport's setting for the device, defaults filled in. */
  async get(deviceId: string): Promise<BrokerSettings> {
    const raw = await this.redis.hgetall(keys.brokerSettings(deviceId));
    const out = {} as BrokerSettings;
    for (const t of BROKER_TRANSPORTS) out[t] = parse(raw[t], t);
    return out;
  }

  /** One transport's setting (one HGET: the relay reads it per page). */
  async one(deviceId: string, transport: string): Promise<BrokerDeviceSetting> {
    return parse(await this.redis.hget(keys.brokerSettings(deviceId), transport), transport);
  }

  /** Sets the given transports' settings; the others keep theirs. */
  async set(deviceId: string, settings: Partial<BrokerSettings>): Promise<BrokerSettings> {
    const fields: string[] = [];
    for (const t of BROKER_TRANSPORTS) {
      const s = settings[t];
      if (s)
        fields.push(t, JSON.stringify({ enabled: s.enabled, ...(s.events ? { events: s.events } : {}) }));
    }
    if (fields.length) await this.redis.hset(keys.brokerSettings(deviceId), ...fields);
    return this.get(deviceId);
  }

  /** Forgets the device's settings (back to the default). */
  async clear(deviceId: string): Promise<void> {
    await this.redis.del(keys.brokerSettings(deviceId));
  }
}

function parse(raw: string | null | undefined, transport: string): BrokerDeviceSetting {
  if (!raw) return defaultBrokerSetting(transport);
  try {
    const v = JSON.parse(raw) as BrokerDeviceSetting;
    return { enabled: v.enabled !== false, ...(Array.isArray(v.events) ? { events: v.events } : {}) };
  } catch {
    return defaultBrokerSetting(transport);
  }
}
