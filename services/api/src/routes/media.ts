import { randomUUID } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { ERRORS, emptyQuerySchema, keys } from '@mgw/contracts';
import {
  DeviceCommandClient,
  storageContext,
  type HistoryOutboundRecord,
  type InboundRecord,
} from '@mgw/store';
import { askHolder } from '../features/holder/ask-holder.js';
import { ApiError } from '../http/api-error.js';
import type { ApiServices } from '../api-services.js';
import { authOf } from '../http/auth.js';
import { NO_DEVICE, answer, type HolderErrors } from '../http/holder-errors.js';
import { parse } from '../http/validation.js';
import type { AnyRecord } from '../read/records.js';
import { ownRecordAndFields } from '../features/messages/mount.js';

/** How long the API waits for the device's owner to download an attachment. */
const DOWNLOAD_TIMEOUT_SECONDS = 30;

/** How a download ask fails in HTTP: whatever the holder answered, the media is unavailable. */
const DOWNLOAD_HOLDER_ERRORS: HolderErrors = {
  no_device: NO_DEVICE,
  timeout: { status: 504, error: ERRORS.mediaTimeout },
  not_connected: { status: 502, error: ERRORS.mediaUnavailable },
  failed: { status: 502, error: ERRORS.mediaUnavailable },
};

/**
 * GET /messages/:id/media: the attachment of an inbound message (or of one the account sent before
 * the link, from its history), downloaded from WhatsApp now
 * (unless the device kept it in the media store on arrival: docs/media.md). Only the sender that
 * owns the device is asked (a device command, answered on a reply list; the bytes come through a
 * short-lived sealed key), so a device nobody holds answers 409 like a send would.
 */
export function mediaRoute(s: ApiServices): RequestHandler {
  // Downloads are rare and bounded in time: each wait may take a connection of its own. No session
  // check: the file comes from WhatsApp's media host, so the holder needs no open socket for it.
  const holder = { commands: new DeviceCommandClient(s.redis, s.bullRedis) };
  return async (req, res) => {
    const { deviceId } = authOf(res);
    parse(emptyQuerySchema, req.query);
    const id = String(req.params.id ?? '');
    const attachment = downloadableAttachment((await ownRecordAndFields(s, deviceId, id)).record);
    if (!attachment) throw new ApiError(404, ERRORS.mediaNotFound);
    // Kept in the media store on arrival: served from there (no round trip to WhatsApp, which
    // forgets media after a while). Gone or unreadable there: downloaded as below.
    const kept = attachment.mediaId
      ? await s.media.bytes(deviceId, attachment.mediaId).catch(() => undefined)
      : undefined;
    if (kept) return sendFile(res, kept, attachment.mimeType, attachment.fileName);

    const requestId = randomUUID();
    answer(
      await askHolder(
        holder,
        deviceId,
        { type: 'download-media', messageId: id },
        { wait: DOWNLOAD_TIMEOUT_SECONDS, requestId, okWithoutData: true },
      ),
      DOWNLOAD_HOLDER_ERRORS,
    );
    const key = keys.mediaDownload(deviceId, requestId);
    const [[, h]] = (await s.redis.multi().hgetallBuffer(key).del(key).exec()) as [
      [Error | null, Record<string, Buffer>],
    ];
    if (!h?.bytes) throw new ApiError(502, ERRORS.mediaUnavailable);
    const bytes = s.encryption.open(h.bytes, storageContext(key, 'bytes'));
    const fileName = h.fileName?.toString() ?? attachment.fileName;
    sendFile(res, bytes, h.mimeType?.toString() ?? attachment.mimeType, fileName);
  };
}

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

/** The file as the answer: its type, length and, when it has one, its name. */
function sendFile(res: Response, bytes: Buffer, mimeType: string, fileName: string | undefined): void {
  res.status(200);
  res.setHeader('Content-Type', mimeType);
  res.setHeader('Content-Length', String(bytes.length));
  if (fileName)
    res.setHeader('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(fileName)}`);
  res.end(bytes);
}
