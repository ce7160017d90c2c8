import { LRUCache } from 'lru-cache';
import type { Sealer } from './sealer.js';

/** Bounds of an `OpenedTextCache`. */
export interface OpenedTextCacheOptions {
  /** Bound on what it keeps: the sealed and opened text of every entry, 2 bytes a character. */
  maxBytes: number;
  /** How long an opened value is kept after it was opened (ms). */
  ttlMs: number;
  /** A sealed value longer than this is opened every time (a page's texts are short). */
  maxEntryChars: number;
}

/** The API's bounds but its size (OPENED_TEXT_CACHE_MB): a minute, texts of 16 Ki characters at most. */
export const API_OPENED_TEXT_CACHE = { ttlMs: 60_000, maxEntryChars: 16 * 1024 } as const;

/**
 * A sealer that remembers what it opened, for the API's reads of pages (a chat list, a chat's
 * messages, the message list): the same previews, texts and contents are opened again by every
 * request that shows them, and opening a value (a cipher set up, AES-GCM, base64) costs more
 * than reading it from Redis did.
 *
 * The key is the sealed value itself with where it is stored (`context`): a sealed value carries
 * its own random IV and tag, so the same key always opens to the same plaintext, whatever was
 * written since — there is nothing to invalidate. A value that does not open (a `SealedValueError`)
 * is not kept; the next read tries again.
 *
 * What it keeps is plaintext in the process's memory (never in Redis, never logged), bounded in
 * size and held for `ttlMs` at most after it was opened — as the sender keeps the contents of the
 * lists it is sending. Sealing, and opening binary values (media), go straight to the sealer.
 */
export class OpenedTextCache implements Sealer {
  /** `sealer` itself when `maxBytes` is 0 (the cache turned off), else one that keeps what it opens. */
  static over(sealer: Sealer, options: OpenedTextCacheOptions): Sealer {
    return options.maxBytes > 0 ? new OpenedTextCache(sealer, options) : sealer;
  }

  private readonly opened: LRUCache<string, string>;

  constructor(
    private readonly sealer: Sealer,
    private readonly options: OpenedTextCacheOptions,
  ) {
    this.opened = new LRUCache({ maxSize: options.maxBytes, ttl: options.ttlMs, ttlAutopurge: false });
  }

  seal(plain: Buffer, context: string): Buffer {
    return this.sealer.seal(plain, context);
  }

  open(sealed: Buffer, context: string): Buffer {
    return this.sealer.open(sealed, context);
  }

  sealText(plain: string, context: string): string {
    return this.sealer.sealText(plain, context);
  }

  openText(sealed: string, context: string): string {
    // Only sealed values (legacy plaintext opens to itself), whose text has no NUL: the key is unambiguous.
    if (sealed.length > this.options.maxEntryChars || !sealed.startsWith('enc'))
      return this.sealer.openText(sealed, context);
    const key = `${context}\u0000${sealed}`;
    const kept = this.opened.get(key);
    if (kept !== undefined) return kept;
    const plain = this.sealer.openText(sealed, context);
    this.opened.set(key, plain, { size: 2 * (key.length + plain.length) });
    return plain;
  }

  /** How many opened values it holds now (tests, metrics). */
  get size(): number {
    return this.opened.size;
  }
}
