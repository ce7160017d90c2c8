import { ATTACHMENT_MAX_BYTES, ERRORS } from '@mgw/contracts';
import { ApiError } from '../http/api-error.js';

/** Bytes a base64 string decodes to, without decoding it (padding optional, as the schema allows). */
export function decodedBase64Size(b64: string): number {
  const len = b64.length;
  const padding = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  const chars = len - padding;
  return Math.floor((chars * 3) / 4);
}

/** 413 when base64 data decodes to more than the spec's 10 MB (checked before anything else runs). */
export function assertAttachmentSize(base64: string): void {
  if (decodedBase64Size(base64) > ATTACHMENT_MAX_BYTES) throw new ApiError(413, ERRORS.attachmentTooLarge);
}

/** The decoded bytes of a base64 attachment; 413 when they are over the spec's 10 MB. */
export function decodeAttachment(base64: string): Buffer {
  assertAttachmentSize(base64);
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length > ATTACHMENT_MAX_BYTES) throw new ApiError(413, ERRORS.attachmentTooLarge);
  return bytes;
}
