import { feature } from '../../http/route-table.js';
import { mediaRoute } from '../../routes/media.js';
import { messagePaths } from './openapi.js';
import type { RequestHandler } from 'express';
import { ApiError } from '../../http/api-error.js';
import { ERRORS, emptyQuerySchema, messagesQuerySchema } from '@mgw/contracts';
import { listMessages } from '../../read/list-messages.js';
import { withContacts } from '../../read/contacts.js';
import { withRevisions } from '../../read/revised-record.js';
import type { InboundRecord } from '@mgw/store';
import type { ApiServices } from '../../api-services.js';
import { authOf } from '../../http/auth.js';
import { parse } from '../../http/validation.js';
import { readRecordAndFields, type AnyRecord } from '../../read/records.js';

/** Reading what became of the device's messages: a page of them, one, an inbound one's file. */
export const messages = feature({
  name: 'messages',
  routes: [
    { method: 'get', path: '/messages', limit: 'messages', handler: 'list' },
    { method: 'get', path: '/messages/:id', limit: 'messages', handler: 'message' },
    { method: 'get', path: '/messages/:id/media', limit: 'messages', handler: 'media' },
  ],
  handlers: (s) => ({ list: listMessagesRoute(s), message: messageRoute(s), media: mediaRoute(s) }),
  paths: messagePaths,
});

/**
 * GET /messages/:id: a message of the token's device; any other id is 404, not 403. The record is
 * in `data` (the one envelope of objects; it was `message` before the events release).
 */
export function messageRoute(s: ApiServices): RequestHandler {
  return async (req, res) => {
    const auth = authOf(res);
    parse(emptyQuerySchema, req.query);
    const id = String(req.params.id ?? '');
    // Through a pool: the device that holds the message now (a moved one: where it went).
    const deviceId = auth.poolId
      ? ((await s.poolBatches.owner(auth.poolId, id)) ?? auth.deviceId)
      : auth.deviceId;
    const { record: data, fields } = await ownRecordAndFields(s, deviceId, id);
    if ('attachment' in data && data.direction === 'inbound') await withMediaUrl(s, deviceId, data);
    await withContacts(s.redis, deviceId, [data as unknown as Record<string, unknown>]);
    res.status(200).json({
      success: true,
      data: {
        ...(await withRevisions(s, deviceId, data, fields)),
        ...(await s.kinds.read(deviceId, id, fields)),
      },
    });
  };
}

/**
 * An inbound attachment kept in the media store: a pre-signed URL signed now (its lifetime from
 * now, never past the object's retention). Once the object is gone its id is dropped too.
 */
async function withMediaUrl(s: Pick<ApiServices, 'media'>, deviceId: string, record: InboundRecord) {
  const att = record.attachment;
  if (!att?.mediaId) return;
  const shown = await s.media.show(deviceId, att.mediaId);
  if (!shown) {
    delete att.mediaId;
    return;
  }
  if (shown.url) Object.assign(att, { url: shown.url, urlExpiresAt: shown.urlExpiresAt });
}

/** GET /messages: a page of the device's messages, newest first (see list-messages.ts). */
export function listMessagesRoute(s: ApiServices): RequestHandler {
  return async (req, res) => {
    const { deviceId } = authOf(res);
    const q = parse(messagesQuerySchema, req.query);
    res.status(200).json({ success: true, data: await listMessages(s, deviceId, q) });
  };
}

/**
 * Message `id` of the device as GET /messages/:id reads it (one read of its record, whichever its
 * direction) and its record's fields; 404 for any other id (another device's too).
 */
export async function ownRecordAndFields(
  s: Parameters<typeof readRecordAndFields>[0],
  deviceId: string,
  id: string,
): Promise<{ record: AnyRecord; fields: Record<string, string> }> {
  const { record, fields } =
    id.length <= 128 ? await readRecordAndFields(s, deviceId, id) : { record: undefined, fields: {} };
  if (!record || record.deviceId !== deviceId) throw new ApiError(404, ERRORS.messageNotFound);
  return { record, fields };
}

/** The record of message `id` of the token's device; 404 for any other id (another device's too). */
export async function ownMessage(s: Pick<ApiServices, 'messages'>, deviceId: string, id: string) {
  const record = id.length <= 128 ? await s.messages.get(deviceId, id) : undefined;
  if (!record || record.deviceId !== deviceId) throw new ApiError(404, ERRORS.messageNotFound);
  return record;
}
