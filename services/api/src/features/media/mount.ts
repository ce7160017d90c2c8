import {
  ERRORS,
  MEDIA_UPLOAD_MAX_BYTES,
  MEDIA_ID_PATTERN,
  contradictedMediaKind,
  emptyQuerySchema,
  mediaSettingsBodySchema,
  mediaUploadQuerySchema,
} from '@mgw/contracts';
import { FIELD_ALLOWANCE, feature, type BodySpec } from '../../http/route-table.js';
import { mediaOperations, mediaSchemas } from './openapi.js';
import type { RequestHandler } from 'express';
import { MediaStoreUnavailableError, isQuotaRefusal } from '@mgw/store';
import type { ApiServices } from '../../api-services.js';
import { ApiError } from '../../http/api-error.js';
import { authOf } from '../../http/auth.js';
import { parse } from '../../http/validation.js';
import { refusalError } from '../../http/refusal-error.js';

/** POST /media: the file itself as the body, at most the attachment limit. */
const uploadBody: BodySpec = {
  raw: { limitBytes: MEDIA_UPLOAD_MAX_BYTES, tooLargeError: ERRORS.mediaBodyTooLarge },
};
/** PUT /media/settings: whether inbound media is kept, and for how long (8 KB, as a webhook). */
const settingsBody: BodySpec = {
  json: { limitBytes: 8 * 1024, tooLargeError: ERRORS.mediaSettingsBodyTooLarge, maxValues: FIELD_ALLOWANCE },
};

/** Attachments uploaded once and sent by id, and the device's media settings (docs/media.md). */
export const media = feature({
  name: 'media',
  routes: [
    // The settings first: `settings` is no media id (ids are `med_…`), so the order only spares a lookup.
    { method: 'get', path: '/media/settings', limit: 'messages', handler: 'getSettings' },
    { method: 'put', path: '/media/settings', limit: 'media', body: settingsBody, handler: 'putSettings' },
    { method: 'post', path: '/media', limit: 'media', body: uploadBody, handler: 'upload' },
    { method: 'get', path: '/media/:id', limit: 'messages', handler: 'get' },
    { method: 'delete', path: '/media/:id', limit: 'media', body: 'none', handler: 'remove' },
  ],
  handlers: (s) => ({
    getSettings: getMediaSettingsRoute(s),
    putSettings: putMediaSettingsRoute(s),
    upload: uploadMediaRoute(s),
    get: getMediaRoute(s),
    remove: deleteMediaRoute(s),
  }),
  operations: mediaOperations,
  schemas: mediaSchemas,
});

type MediaServices = Pick<ApiServices, 'media' | 'mediaSettings' | 'workspaceQuotas'>;

/** A store failure is a 503 that says so; anything else goes on to the error middleware. */
async function storeCall<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof MediaStoreUnavailableError) throw new ApiError(503, ERRORS.mediaStoreUnavailable);
    throw err;
  }
}

/** The id of the path: one of the device's media objects, or 404 (a malformed id names nothing). */
function mediaIdOf(param: unknown): string {
  const id = String(param ?? '');
  if (!MEDIA_ID_PATTERN.test(id)) throw new ApiError(404, ERRORS.mediaObjectNotFound);
  return id;
}

/**
 * POST /media: stores the file of the body (its type the Content-Type, its name `?filename=`)
 * once for the token's device and answers its record (201) — a send names it by `mediaId`. Over
 * the device's media quota: 429 with what it stores and its limit.
 */
export function uploadMediaRoute(s: MediaServices): RequestHandler {
  return async (req, res) => {
    const { deviceId } = authOf(res);
    const { filename } = parse(mediaUploadQuerySchema, req.query);
    const bytes = req.body as Buffer;
    const mimeType = String(req.headers['content-type']).replace(/\s+/g, ' ');
    // Refused rather than replaced by the sniffed type: the client learns its file is not what it
    // said (docs/media.md).
    const contradicted = contradictedMediaKind(mimeType, bytes);
    if (contradicted)
      throw ApiError.invalid([
        {
          path: ['Content-Type'],
          message: `Content-Type ${mimeType.split(';')[0]} contradicts the file: its bytes are ${contradicted.kind} (${contradicted.type})`,
        },
      ]);
    const overQuota = await s.workspaceQuotas.admitMedia(deviceId, bytes.length);
    if (overQuota) throw refusalError(overQuota);
    const stored = await storeCall(() =>
      s.media.put(deviceId, {
        bytes,
        mimeType,
        ...(filename ? { fileName: filename } : {}),
        source: 'upload',
      }),
    );
    if (isQuotaRefusal(stored))
      throw new ApiError(429, ERRORS.mediaQuotaFull, undefined, {
        stored: stored.stored,
        limit: stored.limit,
      });
    const shown = await s.media.show(deviceId, stored.mediaId);
    res.status(201).json({ success: true, data: shown ?? stored });
  };
}

/** GET /media/:id: the object's record, with a pre-signed URL when the store is S3. */
export function getMediaRoute(s: MediaServices): RequestHandler {
  return async (req, res) => {
    const { deviceId } = authOf(res);
    parse(emptyQuerySchema, req.query);
    const shown = await s.media.show(deviceId, mediaIdOf(req.params.id));
    if (!shown) throw new ApiError(404, ERRORS.mediaObjectNotFound);
    res.status(200).json({ success: true, data: shown });
  };
}

/**
 * DELETE /media/:id: the record goes at once (no send can name it any more; a queued message
 * that needs its bytes fails `media_gone`), then its bytes.
 */
export function deleteMediaRoute(s: MediaServices): RequestHandler {
  return async (req, res) => {
    const { deviceId } = authOf(res);
    parse(emptyQuerySchema, req.query);
    const mediaId = mediaIdOf(req.params.id);
    if (!(await s.media.delete(deviceId, mediaId))) throw new ApiError(404, ERRORS.mediaObjectNotFound);
    res.status(200).json({ success: true, data: { mediaId, deleted: true } });
  };
}

/** GET /media/settings: which inbound attachment types the device keeps on arrival, and their cap. */
export function getMediaSettingsRoute(s: MediaServices): RequestHandler {
  return async (req, res) => {
    const { deviceId } = authOf(res);
    parse(emptyQuerySchema, req.query);
    res.status(200).json({ success: true, data: await settingsView(s, deviceId) });
  };
}

/** PUT /media/settings: sets the given fields (the others keep theirs). */
export function putMediaSettingsRoute(s: MediaServices): RequestHandler {
  return async (req, res) => {
    const { deviceId } = authOf(res);
    parse(emptyQuerySchema, req.query);
    const body = parse(mediaSettingsBodySchema, req.body ?? {});
    await s.mediaSettings.set(deviceId, body);
    res.status(200).json({ success: true, data: await settingsView(s, deviceId) });
  };
}

/** The settings, and where the gateway keeps media (an inbound type is kept only with S3). */
async function settingsView(s: MediaServices, deviceId: string) {
  return { ...(await s.mediaSettings.get(deviceId)), store: s.media.kind };
}
