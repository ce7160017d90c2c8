import type { AccountCommandResult } from '@mgw/contracts';
import type { HolderOutcome } from '../holder/index.js';
import { askAccount, type AccountDeps } from './account-deps.js';
import { reachContact, type ContactLookups, type LookupsCapped } from './contact-lookups.js';

/**
 * POST /contacts/:number/presence: the device subscribes to a contact's presence (what it does
 * then arrives as presence.update events).
 */
export async function subscribePresence(
  deps: Pick<AccountDeps, 'holder'> & ContactLookups,
  deviceId: string,
  address: string,
): Promise<HolderOutcome<AccountCommandResult> | LookupsCapped> {
  const reached = await reachContact(deps, deviceId, address);
  if (!reached.ok) return reached;
  return askAccount(deps, deviceId, { type: 'account-presence-subscribe', address });
}
