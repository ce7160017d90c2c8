import type { RedisClient } from '@mgw/common';
import { keys, type ContactIdentity } from '@mgw/contracts';
import { storeScript } from '../lua.js';
import { ContactCache } from './contact-cache.js';

/**
 * The device's phone <-> LID map: one hash per device (`keys.contactIdentities`, in the device's
 * Cluster slot) with `p:<phone>` -> LID digits and `l:<lid digits>` -> phone digits, or `""` for
 * a contact known only by its LID (it hides its number); the usernames of LIDs live there too
 * (`u:`/`n:` fields, contact-usernames.ts). Fed by everything the client learns (the
 * `lid-mapping` keys Baileys writes to the auth state — usync answers, the number check's
 * included, message attributes such as `sender_pn`, `lid-mapping.update` — and the chats of
 * messages contacts write), read to put `contact: { phone?, lid? }` on records and events, and to
 * accept a send to a `<digits>@lid` the device knows.
 *
 * Like the contact cache and the message records' `to`/`from`, identifiers are not sealed (a
 * lookup goes by them); they are never logged. Bounded: at most MAX_IDENTITY_FIELDS fields (two
 * per contact with both, about 75 bytes each); pairs stop at 90 % of it, so the rest stays for
 * LIDs met alone (a contact hiding its number that wrote: without its entry no reply can reach
 * it), whatever a long run of number checks filled. What does not fit is not kept (counted by
 * `learn`'s answer). Removed with the device's credentials (purgeAuthState) on logout, unlink or
 * a new pairing.
 */
export const MAX_IDENTITY_FIELDS = 200_000;

/** Marks a map seeded from the auth state's `lid-mapping` keys (no `p:`/`l:` prefix: never an identity). */
const SEEDED_FIELD = 'seeded';

/** LID digits of `"<digits>@lid"`, or of a LID JID (`<digits>[:device]@lid`); undefined otherwise. */
export function lidDigits(value: string): string | undefined {
  const m = /^([1-9]\d{0,19})(?::\d+)?@lid$/.exec(value);
  return m?.[1];
}

/** The phone digits of a phone-number JID (`<digits>[:device]@s.whatsapp.net`) or of plain digits. */
export function phoneDigits(value: string): string | undefined {
  const m = /^([1-9]\d{6,14})(?::\d+)?(?:@s\.whatsapp\.net)?$/.exec(value);
  return m?.[1];
}

/** Keeps learnt pairs and lone LIDs within the bound (see `lua/contact-identities-learn-1.lua`). */
const LEARN = storeScript<[number, ...string[]]>('contact-identities-learn-1');

/*
 * `mgw_contact(map, to)`, the `contact` of a record's `to` as the device's phone <-> LID map knows
 * it, for the events scripts emit, is `lua/includes/contact.lua` (`--- @include "contact"`).
 */

export class ContactIdentities {
  constructor(
    private readonly redis: RedisClient,
    private readonly maxFields = MAX_IDENTITY_FIELDS,
  ) {}

  /**
   * Keeps what was learnt: a phone with its LID (both ways), or a LID alone (a contact that hides
   * its number; a phone learnt later fills it in). Entries with neither, or a phone alone, carry
   * nothing to keep. Answers how many did not fit the bound.
   */
  async learn(deviceId: string, identities: readonly ContactIdentity[]): Promise<number> {
    const args: string[] = [];
    const seen = new Set<string>();
    for (const { phone, lid } of identities) {
      const l = lid ? lidDigits(lid) : undefined;
      const p = phone ? phoneDigits(phone) : undefined;
      if (!l || seen.has(`${p ?? ''}|${l}`)) continue;
      seen.add(`${p ?? ''}|${l}`);
      args.push(p ?? '', l);
    }
    if (args.length === 0) return 0;
    const maxPairs = this.maxFields - Math.floor(this.maxFields / 10);
    const [dropped, ...changed] = await LEARN.run(
      this.redis,
      [keys.contactIdentities(deviceId)],
      [this.maxFields, maxPairs, ...args],
    );
    // A pair replaced another (a changed number, a number registered again): the number-check
    // answers of the phones concerned may name the old LID.
    if (changed.length) {
      const phones = [...new Set(changed)];
      const lids = (await this.resolveMany(deviceId, phones)).map((c) => c.lid);
      await new ContactCache(this.redis).forgetStaleLids(deviceId, phones, lids);
    }
    return Number(dropped);
  }

  /**
   * Who `address` is: a phone number, `"<digits>@lid"`, or a JID of either kind. The answer has
   * the address's own part and whatever the map knows of the other; `{}` for anything else.
   */
  async resolve(deviceId: string, address: string): Promise<ContactIdentity> {
    return (await this.resolveMany(deviceId, [address]))[0]!;
  }

  /**
   * `resolve` for many addresses: one round trip, and a second for the usernames of the LIDs a
   * phone led to (`n:<lid>`, contact-usernames.ts) when there are such.
   */
  async resolveMany(deviceId: string, addresses: readonly string[]): Promise<ContactIdentity[]> {
    const key = keys.contactIdentities(deviceId);
    const parsed = addresses.map((a) => ({ lid: lidDigits(a), phone: phoneDigits(a) }));
    // A LID's phone and username; a phone's LID.
    const asked = parsed.flatMap((p) =>
      p.lid ? [`l:${p.lid}`, `n:${p.lid}`] : p.phone ? [`p:${p.phone}`] : [],
    );
    const values = asked.length ? await this.redis.hmget(key, ...asked) : [];
    let i = 0;
    const found = parsed.map((p): ContactIdentity => {
      if (p.lid) {
        const [phone, username] = [values[i++], values[i++]];
        return { ...(phone ? { phone } : {}), lid: `${p.lid}@lid`, ...(username ? { username } : {}) };
      }
      if (p.phone) {
        const lid = values[i++];
        return { phone: p.phone, ...(lid ? { lid: `${lid}@lid` } : {}) };
      }
      return {};
    });
    const led = found.filter((c, j) => !parsed[j]!.lid && c.lid);
    if (led.length === 0) return found;
    const names = await this.redis.hmget(key, ...led.map((c) => `n:${lidDigits(c.lid!)}`));
    led.forEach((c, j) => {
      if (names[j]) c.username = names[j]!;
    });
    return found;
  }

  /** True once the map was seeded from the device's auth state (see `markSeeded`). */
  async seeded(deviceId: string): Promise<boolean> {
    return (await this.redis.hexists(keys.contactIdentities(deviceId), SEEDED_FIELD)) === 1;
  }

  /** The pairs the auth state held are in: a later takeover of the device does not read them again. */
  async markSeeded(deviceId: string): Promise<void> {
    await this.redis.hset(keys.contactIdentities(deviceId), SEEDED_FIELD, '1');
  }

  /** True when the device has met this LID (`"<digits>@lid"`): a send to it may go. */
  async knowsLid(deviceId: string, lid: string): Promise<boolean> {
    const digits = lidDigits(lid);
    return (
      digits !== undefined &&
      (await this.redis.hexists(keys.contactIdentities(deviceId), `l:${digits}`)) === 1
    );
  }
}
