import type { RedisClient } from '@mgw/common';
import { CHANNEL_LIMITS, keys, type ChannelListEntry } from '@mgw/contracts';

/**
 * The channels a device created or followed through the gateway (GET /channels): WhatsApp has no
 * query for them, so the channel routes keep this list as they act. A hash (channel JID -> JSON
 * `{ role, name, since }`) of at most `CHANNEL_LIMITS.listed` channels, the oldest learnt dropped
 * first; its owner is the account: deleted on logout (forgetAccount).
 */
export class ChannelList {
  constructor(
    private readonly redis: RedisClient,
    private readonly max: number = CHANNEL_LIMITS.listed,
  ) {}

  /** The device owns or follows this channel now (a known one keeps when it was first learnt). */
  async remember(deviceId: string, entry: Omit<ChannelListEntry, 'since'>): Promise<void> {
    const key = keys.deviceChannels(deviceId);
    const known = await this.get(deviceId, entry.id);
    const since = known?.since ?? new Date().toISOString();
    await this.redis.hset(key, entry.id, JSON.stringify({ role: entry.role, name: entry.name, since }));
    if ((await this.redis.hlen(key)) > this.max) {
      const excess = (await this.list(deviceId)).slice(this.max);
      if (excess.length) await this.redis.hdel(key, ...excess.map((e) => e.id));
    }
  }

  /** The device no longer owns or follows it (deleted, unfollowed, or WhatsApp says it is gone). */
  async forget(deviceId: string, channelId: string): Promise<void> {
    await this.redis.hdel(keys.deviceChannels(deviceId), channelId);
  }

  /** Newest learnt first. */
  async list(deviceId: string): Promise<ChannelListEntry[]> {
    const all = await this.redis.hgetall(keys.deviceChannels(deviceId));
    return Object.entries(all)
      .flatMap(([id, raw]) => {
        const entry = parse(id, raw);
        return entry ? [entry] : [];
      })
      .sort((a, b) => b.since.localeCompare(a.since) || a.id.localeCompare(b.id));
  }

  /** One channel of the list, if the device owns or follows it through the gateway. */
  async get(deviceId: string, channelId: string): Promise<ChannelListEntry | undefined> {
    const raw = await this.redis.hget(keys.deviceChannels(deviceId), channelId);
    return raw ? parse(channelId, raw) : undefined;
  }
}

function parse(id: string, raw: string): ChannelListEntry | undefined {
  try {
    const v = JSON.parse(raw) as Partial<ChannelListEntry>;
    if (v.role !== 'owner' && v.role !== 'follower') return undefined;
    return { id, name: String(v.name ?? ''), role: v.role, since: String(v.since ?? '') };
  } catch {
    return undefined;
  }
}
