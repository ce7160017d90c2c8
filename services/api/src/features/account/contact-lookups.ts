import type { ContactCache, ContactLookupCap } from '@mgw/store';
import { isLidAddress } from '@mgw/contracts';
import type { ApiServices } from '../../api-services.js';

/** What counts a contact's lookups: the device's contact cache and the number check's daily cap. */
export type ContactLookups = Pick<ApiServices, 'metrics'> & {
  cache: Pick<ContactCache, 'getMany'>;
  lookups: Pick<ContactLookupCap, 'take'>;
};

/** The day's lookups are used up: a contact the device does not know cannot be reached until then. */
export type LookupsCapped = { ok: false; reason: 'lookups_capped'; resetInSeconds: number };

/**
 * Account protection for the account requests that reach another person (their profile, presence,
 * a block): a number the device's contact cache does not know costs one lookup at WhatsApp,
 * counted against the number check's daily cap (CONTACT_LOOKUPS_PER_DAY), so these requests are
 * no way around it to probe numbers. A LID needs no lookup.
 */
export async function reachContact(
  deps: ContactLookups,
  deviceId: string,
  address: string,
): Promise<{ ok: true } | LookupsCapped> {
  if (isLidAddress(address)) return { ok: true };
  if ((await deps.cache.getMany(deviceId, [address])).size > 0) return { ok: true };
  const allowance = await deps.lookups.take(deviceId, 1);
  if (!allowance.granted) {
    deps.metrics.contactLookups.inc({ outcome: 'capped' });
    return { ok: false, reason: 'lookups_capped', resetInSeconds: allowance.resetInSeconds };
  }
  deps.metrics.contactLookups.inc({ outcome: 'looked_up' });
  return { ok: true };
}
