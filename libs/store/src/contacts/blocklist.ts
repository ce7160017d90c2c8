import type { RedisClient } from '@mgw/common';
import { BLOCKLIST_MAX, keys, type ContactIdentity } from '@mgw/contracts';
import { storeScript } from '../lua.js';
import { ContactIdentities, lidDigits, phoneDigits } from './contact-identities.js';

/**
 * The account's blocklist as the API must know it without asking the device's socket on every
 * send (`keys.blocklist`, a set in the device's slot): the sender holding the device replaces it
 * from WhatsApp's blocklist query at every connect and keeps it current with the account's own
 * blocks and WhatsApp's blocklist pushes (the phone blocked someone). Entries are `<digits>@lid`
 * (blocklist v2 names contacts by LID) or phone digits; a check goes by either identity the
 * device's phone <-> LID map knows. Bounded (BLOCKLIST_MAX); removed on logout (forgetAccount).
 */
const CHECK = storeScript<number[]>('blocklist-check-2');
const CHANGE = storeScript<number>('blocklist-change-1');

/** An entry for a JID WhatsApp named (`<digits>@lid`, or the phone's digits), or undefined. */
export function blocklistEntry(jid: string): string | undefined {
  const lid = lidDigits(jid);
  if (lid) return `${lid}@lid`;
  return phoneDigits(jid.replace(/@s\.whatsapp\.net$/, '').replace(/:\d+$/, ''));
}

export class Blocklist {
  constructor(
    private readonly redis: RedisClient,
    private readonly max = BLOCKLIST_MAX,
  ) {}

  /** Replaces the list with what WhatsApp answered; answers how many entries did not fit. */
  replace(deviceId: string, jids: readonly string[]): Promise<number> {
    return this.change(deviceId, 'replace', jids);
  }

  add(deviceId: string, jids: readonly string[]): Promise<number> {
    return this.change(deviceId, 'add', jids);
  }

  async remove(deviceId: string, jids: readonly string[]): Promise<void> {
    await this.change(deviceId, 'remove', jids);
  }

  private async change(deviceId: string, action: string, jids: readonly string[]): Promise<number> {
    const entries = jids.map(blocklistEntry).filter((e): e is string => !!e);
    if (action !== 'replace' && entries.length === 0) return 0;
    return CHANGE.run(this.redis, [keys.blocklist(deviceId)], [action, this.max, ...entries]);
  }

  /** Whether each address (a phone or `<digits>@lid`) is blocked, by either identity (one round trip). */
  async blocked(deviceId: string, addresses: readonly string[]): Promise<boolean[]> {
    if (addresses.length === 0) return [];
    const answer = await CHECK.run(
      this.redis,
      [keys.blocklist(deviceId), keys.contactIdentities(deviceId)],
      [...addresses],
    );
    return answer.map((n) => Number(n) === 1);
  }

  async isBlocked(deviceId: string, address: string): Promise<boolean> {
    return (await this.blocked(deviceId, [address]))[0] === true;
  }

  /** Every blocked contact, with both identities when the device's map knows them. */
  async list(deviceId: string): Promise<ContactIdentity[]> {
    const entries = (await this.redis.smembers(keys.blocklist(deviceId))).sort();
    return new ContactIdentities(this.redis).resolveMany(deviceId, entries);
  }
}
