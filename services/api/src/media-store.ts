import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ApiError } from '@mgw/common';
import { ATTACHMENT_MAX_BYTES, ERRORS, keys } from '@mgw/contracts';

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

/**
 * Attachments sent as base64 are decoded and stored once in Redis, with a TTL, and every job of
 * the request references the blob: a list of 1,000 recipients does not copy 10 MB 1,000 times.
 */
export class MediaStore {
  constructor(
    private readonly redis: Redis,
    private readonly ttlSeconds: number,
  ) {}

  /** Throws 413 when the decoded data is over the spec's 10 MB. */
  async put(base64: string): Promise<{ blobId: string; size: number }> {
    assertAttachmentSize(base64);
    const bytes = Buffer.from(base64, 'base64');
    if (bytes.length > ATTACHMENT_MAX_BYTES) throw new ApiError(413, ERRORS.attachmentTooLarge);
    const blobId = randomUUID();
    await this.redis.set(keys.mediaBlob(blobId), bytes, 'EX', this.ttlSeconds);
    return { blobId, size: bytes.length };
  }
}
