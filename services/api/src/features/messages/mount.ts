import type { RequestHandler, Response } from 'express';
import { ERRORS, emptyQuerySchema, messagesQuerySchema } from '@mgw/contracts';
import type { Uses } from '../../api-services.js';
import { ApiError } from '../../http/api-error.js';
import { authOf } from '../../http/auth.js';
import { NO_DEVICE, answer, type HolderErrors } from '../../http/holder-errors.js';
import { feature } from '../../http/route-table.js';
import { parse } from '../../http/validation.js';
import { listMessages } from './list-messages.js';
import { downloadMedia, type DownloadOutcome, type DownloadedFile } from './download-media.js';
import { getMessage } from './get-message.js';
import { messageOperations, messageSchemas } from './openapi.js';

/** Reading what became of the device's messages: a page of them, one, an inbound one's file. */
export const messages = feature({
  name: 'messages',
  routes: [
    { method: 'get', path: '/messages', limit: 'messages', handler: 'list' },
    { method: 'get', path: '/messages/:id', limit: 'messages', pool: true, handler: 'message' },
    { method: 'get', path: '/messages/:id/media', limit: 'messages', handler: 'media' },
  ],
  handlers: (s) => ({ list: listMessagesRoute(s), message: messageRoute(s), media: mediaRoute(s) }),
  operations: messageOperations,
  schemas: messageSchemas,
});

/**
 * GET /messages/:id: a message of the token's device; any other id is 404, not 403. The record is
 * in `data` (the one envelope of objects; it was `message` before the events release).
 */
export function messageRoute(s: Parameters<typeof getMessage>[0]): RequestHandler {
  return async (req, res) => {
    const auth = authOf(res);
    parse(emptyQuerySchema, req.query);
    const data = await getMessage(s, auth, String(req.params.id ?? ''));
    if (!data) throw new ApiError(404, ERRORS.messageNotFound);
    res.status(200).json({ success: true, data });
  };
}

/** GET /messages: a page of the device's messages, newest first (see list-messages.ts). */
export function listMessagesRoute(s: Parameters<typeof listMessages>[0]): RequestHandler {
  return async (req, res) => {
    const { deviceId } = authOf(res);
    const q = parse(messagesQuerySchema, req.query);
    res.status(200).json({ success: true, data: await listMessages(s, deviceId, q) });
  };
}

/** How a download ask fails in HTTP: whatever the holder answered, the media is unavailable. */
const DOWNLOAD_HOLDER_ERRORS: HolderErrors = {
  no_device: NO_DEVICE,
  timeout: { status: 504, error: ERRORS.mediaTimeout },
  not_connected: { status: 502, error: ERRORS.mediaUnavailable },
  failed: { status: 502, error: ERRORS.mediaUnavailable },
};

/**
 * GET /messages/:id/media: the attachment of an inbound message (or of one the account sent before
 * the link, from its history), from the media store, from Meta for a Cloud API device, or
 * downloaded from WhatsApp now by the sender that owns the device (download-media.ts), so a linked
 * device nobody holds answers 409 like a send would.
 */
export function mediaRoute(
  s: Uses<'messages' | 'inbound' | 'encryption' | 'redis' | 'media' | 'commands' | 'cloudDevices' | 'graph'>,
): RequestHandler {
  const { messages, inbound, encryption, redis, media } = s;
  // No session check: the holder reads the media store, and downloads need no open socket first.
  const holder = { commands: s.commands };
  const cloud = { devices: s.cloudDevices, graph: s.graph };
  const deps = { messages, inbound, encryption, redis, media, holder, cloud };
  return async (req, res) => {
    const { deviceId } = authOf(res);
    parse(emptyQuerySchema, req.query);
    const outcome = await downloadMedia(deps, deviceId, String(req.params.id ?? ''));
    if (!outcome.ok) refused(outcome);
    sendFile(res, outcome.file);
  };
}

/** Throws the contract's answer to a download that did not give the file. */
function refused(outcome: Extract<DownloadOutcome, { ok: false }>): never {
  switch (outcome.reason) {
    case 'unknown_message':
      throw new ApiError(404, ERRORS.messageNotFound);
    case 'no_attachment':
      throw new ApiError(404, ERRORS.mediaNotFound);
    case 'not_handed_over':
    case 'meta_unavailable':
      throw new ApiError(502, ERRORS.mediaUnavailable);
    case 'meta_timeout':
      throw new ApiError(504, ERRORS.mediaTimeout);
    default:
      return answer<never>(outcome, DOWNLOAD_HOLDER_ERRORS);
  }
}

/** The file as the answer: its type, length and, when it has one, its name. */
function sendFile(res: Response, { bytes, mimeType, fileName }: DownloadedFile): void {
  res.status(200);
  res.setHeader('Content-Type', mimeType);
  res.setHeader('Content-Length', String(bytes.length));
  if (fileName)
    res.setHeader('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(fileName)}`);
  res.end(bytes);
}
