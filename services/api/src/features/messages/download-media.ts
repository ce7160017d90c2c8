import { randomUUID } from 'node:crypto';
import { keys } from '@mgw/contracts';
import {
  storageContext,
  type HistoryOutboundRecord,
  type InboundRecord,
  type InboundStore,
  type MediaStore,
} from '@mgw/store';
import type { ApiServices } from '../../api-services.js';
import type { AnyRecord, RecordReads } from './records.js';
import { askHolder, type DeviceHolder, type HolderFailure } from '../holder/index.js';
import { ownRecordAndFields } from './own-message.js';
import { downloadCloudMedia, type CloudMediaDeps, type CloudMediaOutcome } from './cloud-media.js';

/** How long the API waits for the device's owner to download an attachment. */
export const DOWNLOAD_TIMEOUT_SECONDS = 30;

/** What a download needs: the message's record, the media store, and the device's holder. */
export type DownloadDeps = Omit<RecordReads, 'inbound'> & {
  inbound: Pick<InboundStore, 'fromFields' | 'cloudMediaIdFromFields'>;
} & Pick<ApiServices, 'redis'> & {
    media: Pick<MediaStore, 'bytes'>;
    /**
     * Asked without a session check: the file comes from WhatsApp's media host, so the holder needs
     * no open socket for it. Downloads are rare and bounded in time: each wait may take a connection
     * of its own.
     */
    holder: DeviceHolder;
    /** A Cloud API device's attachments come from Meta (cloud-media.ts), not from a holder. */
    cloud: CloudMediaDeps;
  };

/** The attachment as it is answered: its bytes, type and, when it has one, its name. */
export interface DownloadedFile {
  bytes: Buffer;
  mimeType: string;
  fileName?: string;
}

export type DownloadOutcome =
  | { ok: true; file: DownloadedFile }
  /** No message of the device has that id (another device's neither). */
  | { ok: false; reason: 'unknown_message' }
  /** The message has no attachment a media reference downloads (one sent through the gateway). */
  | { ok: false; reason: 'no_attachment' }
  /** The holder said it was done, and no bytes were left under the request's key. */
  | { ok: false; reason: 'not_handed_over' }
  /** How the ask of the holder failed. */
  | HolderFailure
  /** How the download from Meta failed (a Cloud API device's). */
  | Extract<CloudMediaOutcome, { ok: false }>;

/**
 * The attachment of an inbound message of the device (or of one the account sent before the link,
 * from its history): from the media store when the device kept it on arrival (docs/media.md),
 * a Cloud API device's from Meta by the API (cloud-media.ts), otherwise downloaded from WhatsApp
 * now by the sender that holds the device (a device command,
 * the bytes handed over sealed under a short-lived key named after the command's id).
 */
export async function downloadMedia(
  deps: DownloadDeps,
  deviceId: string,
  messageId: string,
): Promise<DownloadOutcome> {
  const own = await ownRecordAndFields(deps, deviceId, messageId);
  if (!own) return { ok: false, reason: 'unknown_message' };
  const attachment = downloadableAttachment(own.record);
  if (!attachment) return { ok: false, reason: 'no_attachment' };
  // Kept in the media store on arrival: served from there (no round trip to WhatsApp, which
  // forgets media after a while). Gone or unreadable there: downloaded as below.
  const kept = attachment.mediaId
    ? await deps.media.bytes(deviceId, attachment.mediaId).catch(() => undefined)
    : undefined;
  if (kept) return { ok: true, file: fileOf(kept, attachment.mimeType, attachment.fileName) };
  // A Cloud API device's attachment: Meta's media id, fetched from the Graph API by the API itself.
  const cloudMediaId = deps.inbound.cloudMediaIdFromFields(deviceId, messageId, own.fields);
  if (cloudMediaId) return downloadCloudMedia(deps.cloud, deviceId, cloudMediaId, attachment.fileName);

  const requestId = randomUUID();
  const asked = await askHolder(
    deps.holder,
    deviceId,
    { type: 'download-media', messageId },
    { wait: DOWNLOAD_TIMEOUT_SECONDS, requestId, okWithoutData: true },
  );
  if (!asked.ok) return asked;
  const key = keys.mediaDownload(deviceId, requestId);
  const [[, h]] = (await deps.redis.multi().hgetallBuffer(key).del(key).exec()) as [
    [Error | null, Record<string, Buffer>],
  ];
  if (!h?.bytes) return { ok: false, reason: 'not_handed_over' };
  const bytes = deps.encryption.open(h.bytes, storageContext(key, 'bytes'));
  const fileName = h.fileName?.toString() ?? attachment.fileName;
  return { ok: true, file: fileOf(bytes, h.mimeType?.toString() ?? attachment.mimeType, fileName) };
}

const fileOf = (bytes: Buffer, mimeType: string, fileName: string | undefined): DownloadedFile =>
  fileName === undefined ? { bytes, mimeType } : { bytes, mimeType, fileName };

/**
 * The attachment a message's media reference downloads: an inbound message's, or one the account
 * sent before the link, known from its history (history sync keeps the reference of both). A
 * message sent through the gateway has none: its file was the client's.
 */
function downloadableAttachment(record: AnyRecord): InboundRecord['attachment'] {
  if (record.direction === 'inbound' || ('history' in record && record.history)) {
    return (record as InboundRecord | HistoryOutboundRecord).attachment;
  }
  return undefined;
}
