import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { storeScript } from '../lua.js';

/**
 * What WhatsApp's contact lookup (usync) answered for one number, kept per device: the number
 * check (POST /contacts/check) answers from it, and a send to a number known not to be on
 * WhatsApp fails at once without asking again.
 *
 * One string key per number (`keys.contact`), each with its own TTL, so an answer expires on its
 * own whatever else the device looks up: `""` when the number is not on WhatsApp, else its JID
 * and, when the lookup gave one, a space and its LID. Phone numbers are not secret content (they
 * are in every message record) and are not sealed; they are never logged. About 120 bytes of
 * Redis memory per cached number.
 */
export interface ContactAnswer {
  onWhatsApp: boolean;
  /** The JID to send to (when on WhatsApp). */
  jid?: string;
  /** The number's LID (`…@lid`), when the lookup gave it. */
  lid?: string;
}

export class ContactCache {
  constructor(
    private readonly redis: RedisClient,
    /** How long an answer is kept (CONTACT_CACHE_TTL_SECONDS); only a writer needs it. */
    private readonly ttlSeconds = 0,
  ) {}

  /** The cached answers of `phones` (each number once); numbers not cached are absent. */
  async getMany(deviceId: string, phones: readonly string[]): Promise<Map<string, ContactAnswer>> {
    const unique = [...new Set(phones)];
    const found = new Map<string, ContactAnswer>();
    if (unique.length === 0) return found;
    // One slot (the device's hash tag): MGET works on a Cluster too.
    const values = await this.redis.mget(...unique.map((p) => keys.contact(deviceId, p)));
    unique.forEach((phone, i) => {
      const value = values[i];
      if (value !== null && value !== undefined) found.set(phone, parseAnswer(value));
    });
    return found;
  }

  async get(deviceId: string, phone: string): Promise<ContactAnswer | undefined> {
    return (await this.getMany(deviceId, [phone])).get(phone);
  }

  /**
   * Drops the answers of `phones` that name another LID than `lids` says the number has now (none:
   * any LID is stale): the number changed hands, or its owner changed numbers (whatsmeow 563bcaa0;
   * contact-identities.ts). The next send or check asks WhatsApp again.
   */
  async forgetStaleLids(deviceId: string, phones: readonly string[], lids: readonly (string | undefined)[]) {
    if (phones.length === 0) return;
    const cacheKeys = phones.map((p) => keys.contact(deviceId, p));
    const values = await this.redis.mget(...cacheKeys);
    const stale = cacheKeys.filter((_, i) => {
      const cached = values[i] ? parseAnswer(values[i]!).lid : undefined;
      return cached !== undefined && cached !== lids[i];
    });
    if (stale.length) await this.redis.del(...stale);
  }

  /** Keeps the answers for `ttlSeconds` (each number's clock starts again). */
  async putMany(deviceId: string, answers: ReadonlyMap<string, ContactAnswer>): Promise<void> {
    if (answers.size === 0) return;
    if (this.ttlSeconds <= 0) throw new Error('this contact cache has no TTL: it only reads');
    const batch = this.redis.multi();
    for (const [phone, answer] of answers)
      batch.set(keys.contact(deviceId, phone), formatAnswer(answer), 'EX', this.ttlSeconds);
    await batch.exec();
  }
}

function formatAnswer(answer: ContactAnswer): string {
  if (!answer.onWhatsApp || !answer.jid) return '';
  return answer.lid ? `${answer.jid} ${answer.lid}` : answer.jid;
}

function parseAnswer(value: string): ContactAnswer {
  if (!value) return { onWhatsApp: false };
  const [jid, lid] = value.split(' ');
  return { onWhatsApp: true, jid, ...(lid ? { lid } : {}) };
}

/** Counts looked-up numbers against the daily cap, all or none (see `lua/contact-lookup-take-1.lua`). */
const TAKE = storeScript<[number, number, number]>('contact-lookup-take-1');

export type LookupAllowance = { granted: true } | { granted: false; resetInSeconds: number };

/**
 * The daily cap of numbers one device looks up at WhatsApp for the number check
 * (CONTACT_LOOKUPS_PER_DAY, 0 = no cap): a fixed window that starts with the first lookup and lasts a day,
 * counted atomically. Cache hits are not counted; a send's own lookup is not either (the send
 * policy's caps govern sends).
 */
export class ContactLookupCap {
  constructor(
    private readonly redis: RedisClient,
    private readonly perDay: number,
    private readonly windowSeconds = 24 * 3600,
  ) {}

  /** Counts `count` lookups, all or none: refused when the window's count would pass the cap. */
  async take(deviceId: string, count: number): Promise<LookupAllowance> {
    if (count <= 0 || this.perDay === 0) return { granted: true };
    const [granted, , ttl] = await TAKE.run(
      this.redis,
      [keys.contactLookups(deviceId)],
      [count, this.perDay, this.windowSeconds],
    );
    return granted === 1 ? { granted: true } : { granted: false, resetInSeconds: Math.max(1, ttl) };
  }
}
