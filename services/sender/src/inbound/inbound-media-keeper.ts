import { randomUUID } from 'node:crypto';
import type { Agent } from 'node:http';
import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import { keys, type InboundKeepError, type Metrics, type StoredAttachment } from '@mgw/contracts';
import { downloadInboundMedia, type InboundMessage } from '@mgw/messenger';
import { isQuotaRefusal, type MediaSettingsStore, type MediaStore } from '@mgw/store';

/** Attachments of one batch downloaded and stored at the same time. */
const KEEP_AT_ONCE = 4;

/** An inbound message on its way to its record: its id chosen here when its attachment is kept. */
export type KeptInbound = InboundMessage & { messageId?: string; keptMedia?: StoredAttachment };

export interface InboundMediaKeeperDeps {
  deviceId: string;
  redis: RedisClient;
  media: MediaStore;
  settings: Pick<MediaSettingsStore, 'get'>;
  /** WhatsApp's media CDN through the guarded outbound client (`via`: the device's proxy). */
  fetchBytes: (url: string, via?: Agent) => Promise<Buffer>;
  proxyAgent: () => Agent | undefined;
  metrics: Metrics;
  logger: Logger;
}

/**
 * Keeps inbound attachments in the media store on arrival (docs/media.md), before their message
 * is recorded, so that `message.received` carries the object's id and a pre-signed URL. Only with
 * S3 (`MEDIA_STORE`; without it nothing changes: download on demand) and only the types and sizes
 * the device chose. The attachments of one batch are fetched a few at a time. Whatever fails — WhatsApp's
 * download, the store, the quota — the message is recorded all the same, without `mediaId` (its
 * attachment can still be downloaded on demand), and the failure is counted and logged: an
 * inbound message is never held back by the store. An object stored for a message WhatsApp
 * delivered twice, or whose record then failed, is named by nothing and goes with the retention.
 */
export class InboundMediaKeeper {
  constructor(private readonly deps: InboundMediaKeeperDeps) {}

  async keep(received: InboundMessage[]): Promise<KeptInbound[]> {
    const { media, settings, deviceId } = this.deps;
    const candidates = received.filter((m) => m.attachment && m.mediaMessage);
    if (media.kind !== 's3' || candidates.length === 0) return received;
    const wanted = await settings.get(deviceId);
    const types = new Set<string>(wanted.inboundTypes);
    const keepOne = async (msg: InboundMessage) => {
      const att = msg.attachment!;
      if (!types.has(att.type)) return;
      if (att.size > wanted.inboundMaxBytes) return this.notKept(msg as KeptInbound, 'too_large');
      // A message recorded before (WhatsApp redelivers after a reconnect) is not stored again.
      if (await this.deps.redis.exists(keys.inboundByPlatformId(deviceId, msg.platformMessageId))) return;
      await this.keepOne(msg as KeptInbound, wanted.inboundMaxBytes);
    };
    // A few at a time: each file is in memory while it is stored (up to inboundMaxBytes).
    for (let i = 0; i < candidates.length; i += KEEP_AT_ONCE)
      await Promise.all(candidates.slice(i, i + KEEP_AT_ONCE).map(keepOne));
    return received;
  }

  private async keepOne(msg: KeptInbound, maxBytes: number): Promise<void> {
    const { deviceId, media, logger } = this.deps;
    let file;
    try {
      file = await downloadInboundMedia(msg.mediaMessage!, (url) =>
        this.deps.fetchBytes(url, this.deps.proxyAgent()),
      );
    } catch (err) {
      logger.warn('inbound media not downloaded to keep', { err: serializeError(err) });
      return this.notKept(msg, 'download_failed');
    }
    // The size WhatsApp announced is the sender's word: the file itself decides.
    if (file.bytes.length > maxBytes) return this.notKept(msg, 'too_large');
    const messageId = randomUUID();
    try {
      const stored = await media.put(deviceId, {
        bytes: file.bytes,
        mimeType: file.mimeType,
        ...(file.fileName ? { fileName: file.fileName } : {}),
        source: 'inbound',
        messageId,
      });
      if (isQuotaRefusal(stored)) return this.notKept(msg, 'quota_full');
      const shown = await media.show(deviceId, stored.mediaId);
      msg.messageId = messageId;
      msg.keptMedia = {
        mediaId: stored.mediaId,
        ...(shown?.url ? { url: shown.url, urlExpiresAt: shown.urlExpiresAt } : {}),
      };
      this.count('kept');
    } catch (err) {
      logger.warn('inbound media not kept: the media store failed', { err: serializeError(err) });
      this.notKept(msg, 'media_store_unavailable');
    }
  }

  /** The message is recorded without an object, saying why (its attachment: `mediaError`). */
  private notKept(msg: KeptInbound, why: InboundKeepError): void {
    msg.keptMedia = { mediaError: why };
    this.count(why);
  }

  private count(outcome: string): void {
    this.deps.metrics.mediaInboundKept.inc({ outcome });
  }
}
