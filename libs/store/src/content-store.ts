import type { ChainableCommander, Redis } from 'ioredis';
import { keys, type MessageContent } from '@mgw/contracts';
import { storageContext } from './encryption/families.js';
import type { Sealer } from './sealer.js';

/** A request's content as the sender reads it (the attachment bytes separately: `media`). */
export interface StoredContent {
  content: MessageContent;
  /** Set when the attachment failed for one message of the request: the others fail at once. */
  attachmentError?: string;
}

/**
 * The content a request shares between its messages, stored once per request in a hash
 * (`keys.content`): `body` (sealed JSON), `media` (sealed bytes, optional), `remaining` (messages
 * not settled yet), `bytes` (what it counts against the device's byte quota) and
 * `attachmentError`. The message store's settle script decrements `remaining` and deletes the
 * hash with the last message, so a base64 blob leaves Redis as soon as nobody needs it.
 */
export class ContentStore {
  constructor(
    private readonly redis: Redis,
    private readonly sealer: Sealer,
    /** Upper bound of a content's life (the message retention), should a message never settle. */
    private readonly retentionSeconds: number,
  ) {}

  /** Bytes a content counts against the device's quota: its text and its attachment bytes. */
  static sizeOf(content: MessageContent, media?: Buffer): number {
    return (
      Buffer.byteLength(content.text ?? '') +
      Buffer.byteLength(content.attachment?.caption ?? '') +
      (media?.length ?? 0)
    );
  }

  /** Adds the content's writes to a transaction (the one that adds its messages). */
  stage(
    multi: ChainableCommander,
    deviceId: string,
    contentId: string,
    content: MessageContent,
    messages: number,
    media?: Buffer,
  ): void {
    const key = keys.content(deviceId, contentId);
    const fields: Record<string, string | Buffer> = {
      body: this.sealer.sealText(JSON.stringify(content), storageContext(key, 'body')),
      remaining: String(messages),
      bytes: String(ContentStore.sizeOf(content, media)),
    };
    if (media) fields.media = this.sealer.seal(media, storageContext(key, 'media'));
    multi.hset(key, fields);
    multi.expire(key, this.retentionSeconds);
  }

  /** The content, or undefined once it is gone (every message settled, or the retention ran out). */
  async get(deviceId: string, contentId: string): Promise<StoredContent | undefined> {
    const key = keys.content(deviceId, contentId);
    const [body, attachmentError] = await this.redis.hmget(key, 'body', 'attachmentError');
    if (!body) return undefined;
    return {
      content: JSON.parse(this.sealer.openText(body, storageContext(key, 'body'))) as MessageContent,
      ...(attachmentError ? { attachmentError } : {}),
    };
  }

  /** The attachment bytes the request carried (read only when a device has not uploaded them yet). */
  async media(deviceId: string, contentId: string): Promise<Buffer | undefined> {
    const key = keys.content(deviceId, contentId);
    const media = await this.redis.hgetBuffer(key, 'media');
    return media ? this.sealer.open(media, storageContext(key, 'media')) : undefined;
  }

  async exists(deviceId: string, contentId: string): Promise<boolean> {
    return (await this.redis.exists(keys.content(deviceId, contentId))) === 1;
  }

  /** Remembers that the request's attachment failed, so its other messages fail without a fetch. */
  async rememberAttachmentError(deviceId: string, contentId: string, reason: string): Promise<void> {
    // HSET on a deleted content would recreate it without a TTL: only while it exists.
    await this.redis.eval(
      `if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'attachmentError', ARGV[1]) end`,
      1,
      keys.content(deviceId, contentId),
      reason,
    );
  }
}
