import type { Agent } from 'node:http';
import type { RedisClient } from '@mgw/common';
import { createOutboundClient, serializeError, type Logger, type OutboundConfig } from '@mgw/common';
import { keys, type DeviceCommandReply } from '@mgw/contracts';
import { downloadInboundMedia } from '@mgw/messenger';
import { storageContext, type InboundStore, type Sealer } from '@mgw/store';

/** Largest inbound attachment served (WhatsApp allows bigger documents; they are refused). */
export const INBOUND_MEDIA_MAX_BYTES = 32 * 1024 * 1024;
/** How long a downloaded attachment waits in Redis for the API to take it. */
const HANDOFF_SECONDS = 60;

export interface MediaDownloadDeps {
  redis: RedisClient;
  inbound: InboundStore;
  sealer: Sealer;
  /** Fetches the encrypted file (the guarded outbound client). */
  /** `via`: the device's proxy (docs/proxies.md); the guard vets the URL all the same. */
  fetchBytes: (url: string, via?: Agent) => Promise<Buffer>;
  logger: Logger;
}

/** The guarded outbound client for WhatsApp's media CDN (and, in sandbox mode, the simulator's, with its CA). */
export function createMediaFetcher(opts: {
  outbound: OutboundConfig;
  timeoutMs: number;
  ca?: string;
}): (url: string, via?: Agent) => Promise<Buffer> {
  const client = createOutboundClient({
    allowList: opts.outbound.allowList,
    timeoutMs: opts.timeoutMs,
    maxBytes: INBOUND_MEDIA_MAX_BYTES,
    userAgent: 'messenger-gateway',
    ...(opts.ca ? { ca: opts.ca } : {}),
  });
  return async (url, via) => {
    const res = await client.fetch(url, via ? { via } : {});
    if (res.status < 200 || res.status > 299) throw new Error(`the media host answered ${res.status}`);
    return res.body;
  };
}

/**
 * GET /messages/:id/media, the owner's half: downloads and decrypts the attachment of an inbound
 * message now (on demand: nothing is downloaded when a message arrives), and hands the bytes to
 * the API through a short-lived key, sealed.
 */
export async function serveMediaDownload(
  deps: MediaDownloadDeps,
  deviceId: string,
  messageId: string,
  requestId: string,
): Promise<DeviceCommandReply> {
  const mediaMessage = await deps.inbound.mediaMessage(deviceId, messageId);
  if (!mediaMessage) return { ok: false, error: 'no media' };
  try {
    const media = await downloadInboundMedia(mediaMessage, deps.fetchBytes);
    const key = keys.mediaDownload(deviceId, requestId);
    await deps.redis
      .multi()
      .hset(key, {
        bytes: deps.sealer.seal(media.bytes, storageContext(key, 'bytes')),
        mimeType: media.mimeType,
        ...(media.fileName ? { fileName: media.fileName } : {}),
      })
      .expire(key, HANDOFF_SECONDS)
      .exec();
    return { ok: true };
  } catch (err) {
    deps.logger.warn('inbound media not downloaded', { deviceId, messageId, err: serializeError(err) });
    return { ok: false, error: 'download failed' };
  }
}
