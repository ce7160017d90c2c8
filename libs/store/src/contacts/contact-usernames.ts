import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { storeScript } from '../lua.js';
import { MAX_IDENTITY_FIELDS, lidDigits } from './contact-identities.js';

/** A username (lower case, no `@`) and the LID of the account that has it (`<digits>@lid` or a LID JID). */
export interface UsernamePair {
  username: string;
  lid: string;
}

/** Keeps or forgets usernames in the device's map (see `lua/contact-usernames-1.lua`). */
const USERNAMES = storeScript<number>('contact-usernames-1');

/**
 * The usernames a device resolved (POST /contacts/username, a /send to `@name`) or met (messages
 * and contacts that carry one), kept in its phone <-> LID map (`keys.contactIdentities`, fields
 * `u:<username>` -> LID digits and `n:<lid digits>` -> username): bounded with the map
 * (MAX_IDENTITY_FIELDS), deleted with the device's credentials (logout, unlink, a new pairing),
 * read to send to `@name` and to put `username` on `contact`. A username resolved with its PIN is
 * remembered without it: the PIN is never kept. Identifiers, like the rest of the map, are not
 * sealed (a lookup goes by them) and never logged.
 */
export class ContactUsernames {
  constructor(
    private readonly redis: RedisClient,
    private readonly maxFields = MAX_IDENTITY_FIELDS,
  ) {}

  /** Keeps each username with its LID (the LID becomes one the device knows). Answers how many did not fit. */
  async keep(deviceId: string, pairs: readonly UsernamePair[]): Promise<number> {
    const args: string[] = [];
    for (const { username, lid } of pairs) {
      const digits = lidDigits(lid);
      if (digits && username) args.push(username, digits);
    }
    if (args.length === 0) return 0;
    return USERNAMES.run(this.redis, [keys.contactIdentities(deviceId)], ['keep', this.maxFields, ...args]);
  }

  /** Forgets usernames WhatsApp says no account has now (released, or changed). */
  async forget(deviceId: string, usernames: readonly string[]): Promise<number> {
    if (usernames.length === 0) return 0;
    return USERNAMES.run(this.redis, [keys.contactIdentities(deviceId)], ['forget', 0, ...usernames]);
  }

  /** The LID (`<digits>@lid`) of each username the device knows, in one round trip. */
  async lidsOf(deviceId: string, usernames: readonly string[]): Promise<Map<string, string>> {
    const unique = [...new Set(usernames)];
    const found = new Map<string, string>();
    if (unique.length === 0) return found;
    const values = await this.redis.hmget(keys.contactIdentities(deviceId), ...unique.map((u) => `u:${u}`));
    unique.forEach((u, i) => {
      if (values[i]) found.set(u, `${values[i]}@lid`);
    });
    return found;
  }
}
