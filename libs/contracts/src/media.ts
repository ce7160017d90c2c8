import { randomBytes } from 'node:crypto';
import { Joi } from './text.js';
import { ATTACHMENT_MAX_BYTES, ATTACHMENT_TYPES, STRING_LIMITS, type AttachmentType } from './limits.js';

/**
 * Media objects (docs/media.md): an attachment uploaded once with POST /media and named by its id
 * in sends, or an inbound attachment kept on arrival. Their bytes live in the media store (Redis,
 * sealed; or S3 when MEDIA_STORE is set), their record in Redis.
 */

/** `med_` + 22 base64url characters (16 random bytes): unguessable, and never a route word. */
export const MEDIA_ID_PATTERN = /^med_[A-Za-z0-9_-]{22}$/;

export function newMediaId(): string {
  return 'med_' + randomBytes(16).toString('base64url');
}

/** The largest upload: the spec's attachment limit (a send cannot carry more). */
export const MEDIA_UPLOAD_MAX_BYTES = ATTACHMENT_MAX_BYTES;

/** Where a media object came from. */
export type MediaSource = 'upload' | 'inbound';

/** A media object as GET /media/:id shows it. */
export interface MediaObject {
  mediaId: string;
  deviceId: string;
  size: number;
  mimeType: string;
  fileName?: string;
  /** SHA-256 of the bytes (hex): a client can check what it fetched. */
  sha256: string;
  source: MediaSource;
  /** An inbound attachment: the message it came with. */
  messageId?: string;
  createdAt: string;
  /** When the object and its record are deleted (the retention). */
  expiresAt: string;
  /** Where the bytes are: `redis` (no URL) or `s3` (a pre-signed `url`). */
  store: 'redis' | 's3';
  /** A pre-signed GET of the object (S3 only), valid until `urlExpiresAt`. */
  url?: string;
  urlExpiresAt?: string;
}

/**
 * What an inbound attachment of a type the device keeps carries (on its record and in
 * `message.received`): the object's id and a pre-signed URL, or why it was not kept.
 */
export interface StoredAttachment {
  mediaId?: string;
  url?: string;
  urlExpiresAt?: string;
  /** Not kept: `too_large`, `download_failed`, `media_store_unavailable`, `quota_full`. */
  mediaError?: InboundKeepError;
}

export const INBOUND_KEEP_ERRORS = [
  'too_large',
  'download_failed',
  'media_store_unavailable',
  'quota_full',
] as const;
export type InboundKeepError = (typeof INBOUND_KEEP_ERRORS)[number];

/** A device's choice of inbound attachments kept on arrival (GET/PUT /media/settings). */
export interface MediaSettings {
  /** The attachment types kept on arrival; empty: none (the default, download on demand). */
  inboundTypes: AttachmentType[];
  /** Attachments over this size are not kept (download on demand still works). */
  inboundMaxBytes: number;
}

export const DEFAULT_MEDIA_SETTINGS: MediaSettings = { inboundTypes: [], inboundMaxBytes: 16 * 1024 * 1024 };

/** The largest inbound attachment kept on arrival (the download limit of GET /messages/:id/media). */
export const INBOUND_KEEP_MAX_BYTES = 32 * 1024 * 1024;

export const mediaSettingsBodySchema = Joi.object<Partial<MediaSettings>>({
  inboundTypes: Joi.array()
    .items(Joi.string().valid(...ATTACHMENT_TYPES))
    .unique()
    .max(ATTACHMENT_TYPES.length),
  inboundMaxBytes: Joi.number().integer().min(1).max(INBOUND_KEEP_MAX_BYTES),
})
  .or('inboundTypes', 'inboundMaxBytes')
  .messages({ 'object.missing': 'Give inboundTypes and/or inboundMaxBytes' });

/** POST /media's query: the file's name (its type is the Content-Type header). */
export const mediaUploadQuerySchema = Joi.object<{ filename?: string }>({
  filename: Joi.string()
    .max(STRING_LIMITS.filename)
    // Reduced to its base name, or refused (text.ts: safeFileName).
    .fileName(),
});

export const mediaIdParamSchema = Joi.string().pattern(MEDIA_ID_PATTERN);
