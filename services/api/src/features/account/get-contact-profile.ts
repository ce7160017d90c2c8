import type { ContactProfile } from '@mgw/contracts';
import type { HolderOutcome } from '../holder/index.js';
import { askAccount, type AccountDeps } from './account-deps.js';
import { reachContact, type ContactLookups, type LookupsCapped } from './contact-lookups.js';

/** GET /contacts/:number/profile: a contact's profile (about, picture, business details). */
export async function getContactProfile(
  deps: Pick<AccountDeps, 'holder'> & ContactLookups,
  deviceId: string,
  address: string,
): Promise<HolderOutcome<{ profile: ContactProfile }> | LookupsCapped> {
  const reached = await reachContact(deps, deviceId, address);
  if (!reached.ok) return reached;
  const asked = await askAccount(deps, deviceId, { type: 'account-contact-profile', address });
  if (!asked.ok) return asked;
  return { ok: true, data: { profile: (asked.data as { contactProfile: ContactProfile }).contactProfile } };
}
