import { ATTACHMENT_MAX_BYTES } from '@mgw/contracts';

/** Bytes a base64 string decodes to, without decoding it (padding optional, as the schema allows). */
export function decodedBase64Size(b64: string): number {
  const len = b64.length;
  const padding = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  const chars = len - padding;
  return Math.floor((chars * 3) / 4);
}

/** Whether base64 data decodes to more than the spec's 10 MB (checked before anything else runs). */
export function attachmentTooLarge(base64: string): boolean {
  return decodedBase64Size(base64) > ATTACHMENT_MAX_BYTES;
}

/** The decoded bytes of a base64 attachment, or undefined when they are over the spec's 10 MB. */
export function decodeAttachment(base64: string): Buffer | undefined {
  if (attachmentTooLarge(base64)) return undefined;
  const bytes = Buffer.from(base64, 'base64');
  return bytes.length > ATTACHMENT_MAX_BYTES ? undefined : bytes;
}
