import { GraphError, GraphUnreachableError, MediaTooLargeError, type GraphClient } from '@mgw/cloud';
import { OutboundTimeoutError } from '@mgw/common';
import { INBOUND_KEEP_MAX_BYTES } from '@mgw/contracts';
import type { CloudDeviceStore } from '@mgw/store';
import type { DownloadedFile } from './download-media.js';

/** What a Cloud API device's download needs: its configuration (the number, its token) and the Graph API. */
export interface CloudMediaDeps {
  devices: Pick<CloudDeviceStore, 'get'>;
  graph: Pick<GraphClient, 'downloadMedia'>;
}

/** How a download from Meta ended. */
export type CloudMediaOutcome =
  | { ok: true; file: DownloadedFile }
  /** Meta did not give the file (it forgot it: media ids in webhooks last 7 days; too large; not what it named), or the device is no Cloud API number now. */
  | { ok: false; reason: 'meta_unavailable' }
  /** Meta did not answer in time. */
  | { ok: false; reason: 'meta_timeout' };

/**
 * The attachment of a cloud device's inbound message, fetched now from Meta by the API itself:
 * the media id its webhook named, through GraphClient (GET /{media-id}, then its URL with the
 * number's token; the guarded client, no redirect followed, the SHA-256 Meta named checked), at
 * most INBOUND_KEEP_MAX_BYTES like a linked device's download. No sender is asked: a cloud device
 * has no socket for one to hold, and the API already speaks the Graph API (docs/media.md).
 */
export async function downloadCloudMedia(
  deps: CloudMediaDeps,
  deviceId: string,
  mediaId: string,
  fileName: string | undefined,
): Promise<CloudMediaOutcome> {
  const config = await deps.devices.get(deviceId);
  if (!config) return { ok: false, reason: 'meta_unavailable' };
  try {
    const { bytes, mimeType } = await deps.graph.downloadMedia(config, mediaId, INBOUND_KEEP_MAX_BYTES);
    return { ok: true, file: fileName === undefined ? { bytes, mimeType } : { bytes, mimeType, fileName } };
  } catch (err) {
    if (err instanceof GraphUnreachableError && err.cause instanceof OutboundTimeoutError)
      return { ok: false, reason: 'meta_timeout' };
    if (
      err instanceof GraphError ||
      err instanceof GraphUnreachableError ||
      err instanceof MediaTooLargeError
    )
      return { ok: false, reason: 'meta_unavailable' };
    throw err;
  }
}
