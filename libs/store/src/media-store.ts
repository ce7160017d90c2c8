import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';

/**
 * Attachments sent as base64 are stored once in Redis, with a TTL, and every job of the request
 * references the blob: a list of 1,000 recipients does not copy 10 MB 1,000 times.
 */
export class MediaStore {
  constructor(private readonly redis: Redis) {}

  /** Stores the bytes for `ttlSeconds` (long enough for every job of the request to use them). */
  async put(deviceId: string, bytes: Buffer, ttlSeconds: number): Promise<{ blobId: string; size: number }> {
    const blobId = randomUUID();
    await this.redis.set(keys.mediaBlob(deviceId, blobId), bytes, 'EX', ttlSeconds);
    return { blobId, size: bytes.length };
  }

  /** The stored bytes, or undefined once the blob expired. */
  async get(deviceId: string, blobId: string): Promise<Buffer | undefined> {
    return (await this.redis.getBuffer(keys.mediaBlob(deviceId, blobId))) ?? undefined;
  }
}
