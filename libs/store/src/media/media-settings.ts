import type { RedisClient } from '@mgw/common';
import {
  ATTACHMENT_TYPES,
  DEFAULT_MEDIA_SETTINGS,
  keys,
  type AttachmentType,
  type MediaSettings,
} from '@mgw/contracts';

/**
 * A device's media settings (`keys.mediaSettings`, two fields): which inbound attachment types the
 * sender keeps in the media store on arrival, and up to what size. Set by PUT /media/settings, read
 * by the sender for each inbound attachment; the default keeps none (download on demand).
 */
export class MediaSettingsStore {
  constructor(private readonly redis: RedisClient) {}

  async get(deviceId: string): Promise<MediaSettings> {
    const [types, max] = await this.redis.hmget(
      keys.mediaSettings(deviceId),
      'inboundTypes',
      'inboundMaxBytes',
    );
    const known = new Set<string>(ATTACHMENT_TYPES);
    const parsed = types ? (JSON.parse(types) as string[]).filter((t) => known.has(t)) : undefined;
    return {
      inboundTypes: (parsed as AttachmentType[] | undefined) ?? [...DEFAULT_MEDIA_SETTINGS.inboundTypes],
      inboundMaxBytes: max ? Number(max) : DEFAULT_MEDIA_SETTINGS.inboundMaxBytes,
    };
  }

  /** Sets the given fields (the others keep theirs); answers the settings now. */
  async set(deviceId: string, settings: Partial<MediaSettings>): Promise<MediaSettings> {
    const fields: Record<string, string> = {};
    if (settings.inboundTypes) fields.inboundTypes = JSON.stringify(settings.inboundTypes);
    if (settings.inboundMaxBytes !== undefined) fields.inboundMaxBytes = String(settings.inboundMaxBytes);
    if (Object.keys(fields).length) await this.redis.hset(keys.mediaSettings(deviceId), fields);
    return this.get(deviceId);
  }
}
