/**
 * Uploaded media: `POST /{phone-number-id}/media` stores a file and answers its id; `GET
 * /{media-id}` answers its url, mime_type, sha256 and file_size.
 * https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media
 */
import { createHash, randomBytes } from 'node:crypto';
import { errors } from './errors.js';
import type { MediaType } from './validate.js';

/**
 * Upload limits and types of the media reference
 * (https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#supported-media-types).
 */
export const MEDIA_LIMITS: Record<MediaType, number> = {
  image: 5 * 1024 * 1024,
  video: 16 * 1024 * 1024,
  audio: 16 * 1024 * 1024,
  document: 100 * 1024 * 1024,
  sticker: 500 * 1024,
};
export const MEDIA_MIME_TYPES: Record<MediaType, readonly string[]> = {
  image: ['image/jpeg', 'image/png'],
  video: ['video/mp4', 'video/3gpp'],
  audio: ['audio/aac', 'audio/amr', 'audio/mpeg', 'audio/mp4', 'audio/ogg'],
  document: [
    'text/plain',
    'application/pdf',
    'application/vnd.ms-excel',
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    'application/msword',
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    'application/vnd.ms-powerpoint',
    'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  ],
  sticker: ['image/webp'],
};
export function mediaTypeOf(mime: string): MediaType | undefined {
  const bare = mime.split(';')[0]!.trim().toLowerCase();
  return (Object.keys(MEDIA_MIME_TYPES) as MediaType[]).find((t) => MEDIA_MIME_TYPES[t].includes(bare));
}

export interface StoredMedia {
  id: string;
  phoneNumberId: string;
  type: MediaType;
  mimeType: string;
  sha256: string;
  filename?: string;
  data: Buffer;
}

export interface UploadedFile {
  data: Buffer;
  contentType?: string;
  filename?: string;
}

export const newMediaId = () => String(1e15 + randomBytes(6).readUIntBE(0, 6));

export class MediaStore {
  private readonly files = new Map<string, StoredMedia>();

  constructor(readonly limits: Record<MediaType, number> = MEDIA_LIMITS) {}

  /**
   * Stores a file for a number. The type is the form's `type` field (else the part's); it must
   * be one the reference lists, and the file within that type's limit (131053 beyond it).
   */
  upload(phoneNumberId: string, part: UploadedFile, type: string): string {
    const mime = (type || part.contentType || '').split(';')[0]!.trim().toLowerCase();
    const mediaType = mediaTypeOf(mime);
    if (!mediaType)
      throw errors.invalidParameter(
        `Param file must be a file with one of the following types: ${Object.values(MEDIA_MIME_TYPES).flat().join(', ')}. Received file of type '${mime}'.`,
      );
    if (part.data.length === 0) throw errors.mediaUpload('The file is empty.');
    const max = this.limits[mediaType];
    if (part.data.length > max)
      throw errors.mediaUpload(
        `The file is ${part.data.length} bytes; ${mediaType} files may be at most ${max} bytes.`,
      );
    const id = newMediaId();
    this.files.set(id, {
      id,
      phoneNumberId,
      type: mediaType,
      mimeType: mime,
      sha256: createHash('sha256').update(part.data).digest('hex'),
      ...(part.filename ? { filename: part.filename } : {}),
      data: Buffer.from(part.data),
    });
    return id;
  }

  /**
   * Keeps a file a user sent to a number, as Meta keeps it for the business (GET /{media-id} with
   * its token, then the URL): any type the user's app sends, no upload limit (the app's own).
   */
  receive(phoneNumberId: string, file: { type: MediaType; mimeType: string; bytes: Buffer }): StoredMedia {
    const stored: StoredMedia = {
      id: newMediaId(),
      phoneNumberId,
      type: file.type,
      mimeType: file.mimeType,
      sha256: createHash('sha256').update(file.bytes).digest('hex'),
      data: Buffer.from(file.bytes),
    };
    this.files.set(stored.id, stored);
    return stored;
  }

  get(id: string): StoredMedia | undefined {
    return this.files.get(id);
  }
}
