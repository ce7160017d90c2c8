import { createHash } from 'node:crypto';
import type { RedisClient } from '@mgw/common';
import { keys, newMediaId, type MediaObject, type MediaSource, type Metrics } from '@mgw/contracts';
import { storeScript } from '../lua.js';
import type { Sealer } from '../encryption/sealer.js';
import type { MediaConfig } from './media-config.js';
import {
  MediaStoreUnavailableError,
  RedisMediaBackend,
  type MediaBackend,
  type MediaRef,
} from './media-backend.js';
import { USAGE_TTL_SECONDS } from '../workspaces/usage.js';

const RESERVE = storeScript<[number, number, number?]>('media-reserve-2');
const RELEASE = storeScript<number>('media-release-2');

export interface MediaPut {
  bytes: Buffer;
  mimeType: string;
  fileName?: string;
  source: MediaSource;
  messageId?: string;
}

/** A put refused by the device's media quota: what it stores now. */
export interface MediaQuotaRefusal {
  refused: 'quota_full';
  stored: { bytes: number; objects: number };
  limit: { bytes: number; objects: number };
}

/**
 * The media store (docs/media.md): objects uploaded once (POST /media) and inbound attachments
 * kept on arrival. Their bytes go to a `MediaBackend` (Redis, sealed; or S3 with MEDIA_STORE);
 * their record (`keys.media`) and the device's quota stay in Redis. A record is written only after
 * its bytes are stored whole, so nothing half-stored is ever named by an id; both expire with the
 * retention (the record by its TTL, S3 objects by the sweep), and an object is only ever looked
 * up under the device that owns it.
 */
export class MediaStore {
  /** Where the bytes are: `s3` with MEDIA_STORE, else `redis`. */
  readonly kind: 'redis' | 's3';
  private loaded?: Promise<MediaBackend>;

  constructor(
    private readonly redis: RedisClient,
    private readonly sealer: Sealer,
    readonly config: MediaConfig,
    private readonly metrics?: Metrics,
  ) {
    this.kind = config.s3 ? 's3' : 'redis';
  }

  /**
   * The backend, made on first use: the AWS SDK is loaded only by a gateway with MEDIA_STORE (the
   * other processes, and every install without S3, never pay for it in start time or memory).
   */
  backend(): Promise<MediaBackend> {
    const s3 = this.config.s3;
    this.loaded ??= s3
      ? import('./s3-media-backend.js').then(({ S3MediaBackend }) => new S3MediaBackend(s3))
      : Promise.resolve(new RedisMediaBackend(this.redis, this.sealer));
    return this.loaded;
  }

  /** Stores an object for the device: its record, or the quota's refusal. Throws when the store fails. */
  async put(deviceId: string, input: MediaPut): Promise<MediaObject | MediaQuotaRefusal> {
    const mediaId = newMediaId();
    const now = Date.now();
    const ref: MediaRef = { deviceId, mediaId, expiresAtMs: now + this.config.retentionSeconds * 1000 };
    const size = input.bytes.length;
    const reserved = await RESERVE.run(
      this.redis,
      [keys.mediaExpiries(deviceId), keys.mediaSizes(deviceId)],
      [
        mediaId,
        size,
        ref.expiresAtMs,
        now,
        this.config.deviceMaxBytes,
        this.config.deviceMaxObjects,
        this.config.retentionSeconds + 60,
      ],
    );
    if (reserved[0] !== 1)
      return {
        refused: 'quota_full',
        stored: { bytes: reserved[1], objects: reserved[2] ?? 0 },
        limit: { bytes: this.config.deviceMaxBytes, objects: this.config.deviceMaxObjects },
      };
    try {
      const backend = await this.backend();
      await this.counted('put', () => backend.put(ref, input.bytes, input.mimeType));
    } catch (err) {
      await this.release(deviceId, mediaId);
      throw err;
    }
    const record: MediaObject = {
      mediaId,
      deviceId,
      size,
      mimeType: input.mimeType,
      ...(input.fileName ? { fileName: input.fileName } : {}),
      sha256: createHash('sha256').update(input.bytes).digest('hex'),
      source: input.source,
      ...(input.messageId ? { messageId: input.messageId } : {}),
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(ref.expiresAtMs).toISOString(),
      store: this.kind,
    };
    const key = keys.media(deviceId, mediaId);
    // The record and its bytes in the device's usage of the day (usage.ts), in one step.
    const usage = keys.deviceDayUsage(deviceId, record.createdAt);
    await this.redis
      .multi()
      .hset(key, { ...record, size: String(size), expiresAtMs: String(ref.expiresAtMs) })
      .pexpireat(key, ref.expiresAtMs)
      .hincrby(usage, 'mediaBytes', size)
      .expire(usage, USAGE_TTL_SECONDS)
      .exec();
    this.metrics?.mediaStoreBytes.inc({ source: input.source }, size);
    return record;
  }

  /** The device's object (never another device's), or undefined once deleted or expired. */
  async get(deviceId: string, mediaId: string): Promise<(MediaObject & { ref: MediaRef }) | undefined> {
    const h = await this.redis.hgetall(keys.media(deviceId, mediaId));
    const expiresAtMs = Number(h.expiresAtMs);
    if (h.deviceId !== deviceId || !(expiresAtMs > Date.now())) return undefined;
    return {
      mediaId,
      deviceId,
      size: Number(h.size),
      mimeType: h.mimeType!,
      ...(h.fileName ? { fileName: h.fileName } : {}),
      sha256: h.sha256!,
      source: h.source as MediaSource,
      ...(h.messageId ? { messageId: h.messageId } : {}),
      createdAt: h.createdAt!,
      expiresAt: h.expiresAt!,
      store: h.store as 'redis' | 's3',
      ref: { deviceId, mediaId, expiresAtMs },
    };
  }

  /** The object as the API shows it: with a pre-signed URL (S3) that never outlives the object. */
  async withUrl(obj: MediaObject & { ref: MediaRef }): Promise<MediaObject> {
    const { ref, ...shown } = obj;
    const left = Math.floor((ref.expiresAtMs - Date.now()) / 1000);
    const seconds = Math.min(this.config.urlTtlSeconds, left);
    if (seconds < 1) return shown;
    const url = await (
      await this.backend()
    ).presign(ref, seconds, {
      mimeType: obj.mimeType,
      ...(obj.fileName ? { fileName: obj.fileName } : {}),
    });
    if (!url) return shown;
    return { ...shown, url, urlExpiresAt: new Date(Date.now() + seconds * 1000).toISOString() };
  }

  /** The device's object with its URL, or undefined. */
  async show(deviceId: string, mediaId: string): Promise<MediaObject | undefined> {
    const obj = await this.get(deviceId, mediaId);
    return obj && this.withUrl(obj);
  }

  /** The object's bytes (a send), or undefined when it is gone. Throws when the store fails. */
  async bytes(deviceId: string, mediaId: string): Promise<Buffer | undefined> {
    const obj = await this.get(deviceId, mediaId);
    if (!obj) return undefined;
    const backend = await this.backend();
    return this.counted('get', () => backend.get(obj.ref));
  }

  /**
   * Deletes the device's object: its record at once (no id names it any more), then its bytes.
   * Bytes the store failed to delete go with the retention sweep. False when there was none.
   */
  async delete(deviceId: string, mediaId: string): Promise<boolean> {
    const obj = await this.get(deviceId, mediaId);
    if (!obj) return false;
    const removed = await this.redis.del(keys.media(deviceId, mediaId));
    if (removed === 0) return false;
    await this.release(deviceId, mediaId);
    const backend = await this.backend();
    await this.counted('delete', () => backend.delete(obj.ref)).catch(() => undefined);
    return true;
  }

  /** Retention: deletes the backend's expired objects (S3; Redis expires its own). */
  async sweep(nowMs = Date.now()): Promise<number> {
    const backend = await this.backend();
    const swept = await this.counted('sweep', () => backend.sweep(nowMs));
    if (swept) this.metrics?.mediaSwept.inc(swept);
    return swept;
  }

  private async release(deviceId: string, mediaId: string): Promise<void> {
    await RELEASE.run(this.redis, [keys.mediaExpiries(deviceId), keys.mediaSizes(deviceId)], [mediaId]);
  }

  private async counted<T>(op: string, run: () => Promise<T>): Promise<T> {
    try {
      const out = await run();
      this.metrics?.mediaStoreOps.inc({ op, store: this.kind, outcome: 'ok' });
      return out;
    } catch (err) {
      this.metrics?.mediaStoreOps.inc({ op, store: this.kind, outcome: 'failed' });
      throw err instanceof MediaStoreUnavailableError
        ? err
        : new MediaStoreUnavailableError(`media ${op} failed: ${(err as Error).message}`);
    }
  }
}

export function isQuotaRefusal(x: MediaObject | MediaQuotaRefusal): x is MediaQuotaRefusal {
  return 'refused' in x;
}
