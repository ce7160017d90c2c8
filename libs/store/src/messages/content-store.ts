import { LRUCache } from 'lru-cache';
import { RedisScript, type RedisClient } from '@mgw/common';
import {
  keys,
  messageKindOf,
  personaliseContent,
  type MessageContent,
  type RecipientVars,
} from '@mgw/contracts';
import { storageContext } from '../encryption/families.js';
import { storeScript, storeScriptSource } from '../lua.js';
import type { Sealer } from '../encryption/sealer.js';
import type { StagedWrites } from './staged-writes.js';

/**
 * What the dashboard shows of a sent text or attachment (the admin API only): the text and caption
 * as its recipient got them (personalised), the attachment's kind and name — never its bytes.
 */
export interface ShownContent {
  text?: string;
  attachment?: { type: string; fileName?: string; mimeType?: string; caption?: string };
}

/**
 * Whether a content is kept, without its attachment bytes, for its messages' retention once they
 * are all settled (the `shown` flag, read by the settle script): a text or an attachment. An OTP
 * (its code), an edit or a delete (their own records show them) and a message kind (its record
 * keeps its fields, `kindBody`) leave Redis with their last message, as before.
 */
export function isShownContent(content: MessageContent): boolean {
  if (content.otp || content.edit || content.delete || messageKindOf(content)) return false;
  return content.text !== undefined || content.attachment !== undefined;
}

/** A request's content as the sender reads it (the attachment bytes separately: `media`). */
export interface StoredContent {
  content: MessageContent;
  /** Set when the attachment failed for one message of the request: the others fail at once. */
  attachmentError?: string;
  /**
   * Set while a long batch is still being accepted (in pieces): its messages wait, unsent, until
   * the field goes; past this time (epoch ms) the batch was never completed and they fail.
   */
  heldUntil?: number;
}

/**
 * Takes back messages of a batch refused in pieces (`lua/content-unstage-2.lua`). It only frees
 * memory: the shebang's `allow-oom` lets it run on a Redis that is out of memory.
 */
const UNSTAGE = new RedisScript<number>(
  'lua:store/content-unstage-2',
  `#!lua flags=allow-oom\n${storeScriptSource('content-unstage-2')}`,
  2,
);

/** Sets the content's `attachmentError` while it exists (`lua/content-attachment-error-1.lua`). */
const ATTACHMENT_ERROR = storeScript('content-attachment-error-1');

/**
 * A sender's copy of contents it has read (`ContentStore`'s `cache` option): a batch's messages share
 * one content, so the sender reads and opens it once, not once per message.
 */
export interface ContentCacheOptions {
  /** Bound on the copies' size, counted in sealed bytes of their bodies. */
  maxBytes: number;
  /** How long a copy is used before the content is read again (ms). */
  ttlMs: number;
}

/**
 * The content's fields what one message showed is read from (`ContentStore.shownFrom`): the flag
 * that the content keeps it, the sealed body, and the message's own variables when personalised.
 */
export const SHOWN_FIELDS = { flag: 'shown', body: 'body', varsPrefix: 'vars:' } as const;
const shownFields = (messageId: string) =>
  [SHOWN_FIELDS.flag, SHOWN_FIELDS.body, `${SHOWN_FIELDS.varsPrefix}${messageId}`] as const;

/**
 * The content a request shares between its messages, stored once per request in a hash
 * (`keys.content`): `body` (sealed JSON), `media` (sealed bytes, optional), `remaining` (messages
 * not settled yet), `bytes` (what it counts against the device's byte quota),
 * `attachmentError`, `heldUntil` while a long batch is being accepted in pieces, and a personalised
 * batch's variables (`vars:<messageId>`, sealed, see `stageVars`), and `shown` (a text or an
 * attachment, see `isShownContent`). The message store's settle script decrements `remaining` and,
 * with the last message, gives its bytes back and deletes the hash — or, for a `shown` content,
 * only its attachment bytes (`media`): the text, caption and variables stay as long as the records
 * that name the content (each change of one extends the content's TTL to the record's), so the
 * dashboard shows what was sent without a copy per recipient. A base64 blob still leaves Redis as
 * soon as nobody needs it.
 */
export class ContentStore {
  private readonly cache: LRUCache<string, StoredContent> | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly sealer: Sealer,
    /** Upper bound of a content's life (the message retention), should a message never settle. */
    private readonly retentionSeconds: number,
    /** Keeps what `get` read (the sender's option; see `get` for which contents). */
    cache?: ContentCacheOptions,
  ) {
    this.cache = cache && new LRUCache({ maxSize: cache.maxBytes, ttl: cache.ttlMs, ttlAutopurge: false });
  }

  /** Bytes a content counts against the device's quota: its text and its attachment bytes. */
  static sizeOf(content: MessageContent, media?: Buffer): number {
    return (
      Buffer.byteLength(content.text ?? '') +
      Buffer.byteLength(content.attachment?.caption ?? '') +
      Buffer.byteLength(content.edit?.text ?? '') +
      (media?.length ?? 0)
    );
  }

  /** Adds the content's writes to those that add its messages (a transaction, or the API's accept call). */
  stage(
    multi: StagedWrites,
    deviceId: string,
    contentId: string,
    content: MessageContent,
    messages: number,
    media?: Buffer,
    /** A batch accepted in pieces: its messages are held until `stageReady` (or this time, epoch ms). */
    heldUntil?: number,
  ): void {
    const key = keys.content(deviceId, contentId);
    const fields: Record<string, string | Buffer> = {
      body: this.sealer.sealText(JSON.stringify(content), storageContext(key, 'body')),
      remaining: String(messages),
      bytes: String(ContentStore.sizeOf(content, media)),
    };
    if (media) fields.media = this.sealer.seal(media, storageContext(key, 'media'));
    if (heldUntil !== undefined) fields.heldUntil = String(heldUntil);
    // Which message kind it is (not secret): a queued message's record reads its kind only then.
    const kind = messageKindOf(content);
    if (kind) fields.kind = kind;
    if (isShownContent(content)) fields[SHOWN_FIELDS.flag] = '1';
    multi.hset(key, fields);
    multi.expire(key, this.retentionSeconds);
  }

  /** A later piece of a batch: `messages` more share the content. */
  stageMore(multi: StagedWrites, deviceId: string, contentId: string, messages: number): void {
    const key = keys.content(deviceId, contentId);
    multi.hincrby(key, 'remaining', messages);
    // Should the content be gone (every earlier message withdrawn), this recreates it: with a TTL.
    multi.expire(key, this.retentionSeconds);
  }

  /**
   * Takes back a batch refused after some of its pieces were committed: `removed` of its messages
   * (their jobs already removed) stop counting against the device's quota and the content; when
   * none is left (`allRemoved`) the content goes with its bytes. It only frees memory, so it runs
   * on a Redis that is out of memory (the usual reason a piece was refused).
   */
  async unstage(deviceId: string, contentId: string, removed: number, allRemoved: boolean): Promise<void> {
    await UNSTAGE.run(
      this.redis,
      [keys.content(deviceId, contentId), keys.deviceQueue(deviceId)],
      [removed, allRemoved ? 1 : 0],
    );
  }

  /**
   * A personalised batch: each message's variables, sealed, in the content's hash (`vars:<messageId>`),
   * so they leave Redis with the content. Their size counts against the device's byte quota with
   * the content's (`varsSize`); adds it to the content's `bytes`, given back with its last message.
   */
  stageVars(
    multi: StagedWrites,
    deviceId: string,
    contentId: string,
    entries: readonly { messageId: string; vars: RecipientVars }[],
  ): void {
    if (entries.length === 0) return;
    const key = keys.content(deviceId, contentId);
    const fields: Record<string, string> = {};
    let bytes = 0;
    for (const { messageId, vars } of entries) {
      const plain = JSON.stringify(vars);
      bytes += Buffer.byteLength(plain);
      fields[`vars:${messageId}`] = this.sealer.sealText(plain, storageContext(key, `vars:${messageId}`));
    }
    multi.hset(key, fields);
    multi.hincrby(key, 'bytes', bytes);
  }

  /** Bytes a batch's variables count against the device's quota (what `stageVars` adds). */
  static varsSize(vars: readonly RecipientVars[]): number {
    let bytes = 0;
    for (const v of vars) bytes += Buffer.byteLength(JSON.stringify(v));
    return bytes;
  }

  /** One message's variables (undefined when they, or the content, are gone). */
  async vars(deviceId: string, contentId: string, messageId: string): Promise<RecipientVars | undefined> {
    const key = keys.content(deviceId, contentId);
    const sealed = await this.redis.hget(key, `vars:${messageId}`);
    if (!sealed) return undefined;
    return JSON.parse(
      this.sealer.openText(sealed, storageContext(key, `vars:${messageId}`)),
    ) as RecipientVars;
  }

  /** The batch's last piece: its messages may be sent. */
  stageReady(multi: StagedWrites, deviceId: string, contentId: string): void {
    multi.hdel(keys.content(deviceId, contentId), 'heldUntil');
  }

  /**
   * The content, or undefined once it is gone (every message settled, or the retention ran out).
   * The answer is shared: callers never change it.
   *
   * With the `cache` option, a content without an attachment is kept once its batch is wholly
   * accepted (no `heldUntil`): nothing read here changes after that — its body is written once and
   * `attachmentError` concerns only attachments — so the next messages of the batch are sent from
   * the copy. A copy outlives its content by at most `ttlMs`; whether a message may still go is
   * never decided here but by its claim (a cancelled batch, a deleted message, an expired OTP).
   */
  async get(deviceId: string, contentId: string): Promise<StoredContent | undefined> {
    const key = keys.content(deviceId, contentId);
    const kept = this.cache?.get(key);
    if (kept) return kept;
    const [body, attachmentError, heldUntil] = await this.redis.hmget(
      key,
      'body',
      'attachmentError',
      'heldUntil',
    );
    if (!body) return undefined;
    const stored: StoredContent = {
      content: JSON.parse(this.sealer.openText(body, storageContext(key, 'body'))) as MessageContent,
      ...(attachmentError ? { attachmentError } : {}),
      ...(heldUntil ? { heldUntil: Number(heldUntil) } : {}),
    };
    if (this.cache && !stored.content.attachment && !attachmentError && !heldUntil)
      this.cache.set(key, stored, { size: body.length });
    return stored;
  }

  /**
   * What one message of the content showed its recipient (the admin API's message views): read from
   * the content, which a text or an attachment keeps (without its bytes) as long as its messages'
   * records (see `isShownContent`). Undefined when the content is gone or is not of that sort.
   */
  async shown(deviceId: string, contentId: string, messageId: string): Promise<ShownContent | undefined> {
    const fields = await this.redis.hmget(keys.content(deviceId, contentId), ...shownFields(messageId));
    return this.shownFrom(deviceId, contentId, messageId, fields);
  }

  /**
   * What `shown` answers, from the content's fields `shownFields(messageId)` names, read by the
   * caller (a script that reads a page in one round trip: GET /chats).
   */
  shownFrom(
    deviceId: string,
    contentId: string,
    messageId: string,
    [flag, body, vars]: readonly (string | null | undefined)[],
  ): ShownContent | undefined {
    const key = keys.content(deviceId, contentId);
    if (flag !== '1' || !body) return undefined;
    let content = JSON.parse(this.sealer.openText(body, storageContext(key, 'body'))) as MessageContent;
    if (content.personalised) {
      if (!vars) return undefined;
      const plain = this.sealer.openText(vars, storageContext(key, `vars:${messageId}`));
      content = personaliseContent(content, JSON.parse(plain) as RecipientVars);
    }
    const att = content.attachment;
    return {
      ...(content.text !== undefined ? { text: content.text } : {}),
      ...(att
        ? {
            attachment: {
              type: att.type,
              ...(att.filename ? { fileName: att.filename } : {}),
              ...(att.mimeType ? { mimeType: att.mimeType } : {}),
              ...(att.caption !== undefined ? { caption: att.caption } : {}),
            },
          }
        : {}),
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
    await ATTACHMENT_ERROR.run(this.redis, [keys.content(deviceId, contentId)], [reason]);
  }
}
