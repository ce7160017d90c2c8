import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { storageContext } from '../encryption/families.js';
import type { Sealer } from '../encryption/sealer.js';

/** One object's place in a backend: its device, id and expiry (S3 keys are ordered by it). */
export interface MediaRef {
  deviceId: string;
  mediaId: string;
  /** Epoch ms: the object is deleted then (the retention). */
  expiresAtMs: number;
}

/** What a pre-signed GET answers with. */
export interface PresignHeaders {
  mimeType: string;
  fileName?: string;
}

/**
 * Where media bytes live: the one interface of the media store's two implementations, Redis
 * (sealed, below) and S3 (`s3-media-backend.ts`). `MediaStore` keeps the records and the quota;
 * a backend only moves bytes. Every failure of the backend itself is a `MediaStoreUnavailableError`.
 */
export interface MediaBackend {
  readonly kind: 'redis' | 's3';
  /** Stores the whole object, or nothing: a failed put leaves nothing that a record names. */
  put(ref: MediaRef, bytes: Buffer, mimeType: string): Promise<void>;
  /** The bytes, or undefined when the object is gone. */
  get(ref: MediaRef): Promise<Buffer | undefined>;
  /** A URL that fetches the object for `seconds` (undefined: this backend has none). */
  presign(ref: MediaRef, seconds: number, headers: PresignHeaders): Promise<string | undefined>;
  delete(ref: MediaRef): Promise<void>;
  /** Retention: deletes the objects whose expiry has passed; answers how many. */
  sweep(nowMs: number): Promise<number>;
}

/** The media store did not take or give an object (S3 down, timed out, refused). */
export class MediaStoreUnavailableError extends Error {
  override name = 'MediaStoreUnavailableError';
}

/**
 * Media in Redis: each object one sealed string (AES-256-GCM, the store's `Encryption`) that
 * expires with its record, so retention needs no sweep. No URL: the bytes are read through the
 * gateway (a send), never handed out.
 */
export class RedisMediaBackend implements MediaBackend {
  readonly kind = 'redis';

  constructor(
    private readonly redis: RedisClient,
    private readonly sealer: Sealer,
  ) {}

  async put(ref: MediaRef, bytes: Buffer): Promise<void> {
    const key = keys.mediaBlob(ref.deviceId, ref.mediaId);
    await this.redis.set(key, this.sealer.seal(bytes, storageContext(key)), 'PXAT', ref.expiresAtMs);
  }

  async get(ref: MediaRef): Promise<Buffer | undefined> {
    const key = keys.mediaBlob(ref.deviceId, ref.mediaId);
    const sealed = await this.redis.getBuffer(key);
    return sealed ? this.sealer.open(sealed, storageContext(key)) : undefined;
  }

  async presign(): Promise<undefined> {
    return undefined;
  }

  async delete(ref: MediaRef): Promise<void> {
    await this.redis.del(keys.mediaBlob(ref.deviceId, ref.mediaId));
  }

  async sweep(): Promise<number> {
    return 0;
  }
}
