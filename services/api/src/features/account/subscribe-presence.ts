import type { AccountCommandResult } from '@mgw/contracts';
import type { HolderOutcome } from '../holder/ask-holder.js';
import { askAccount, type AccountDeps } from './account-deps.js';
import { reachContact, type LookupsCapped } from './contact-lookups.js';

/**
 * POST /contacts/:number/presence: the device subscribes to a contact's presence (what it does
 * then arrives as presence.update events).
 */
export async function subscribePresence(
  deps: AccountDeps,
  deviceId: string,
  address: string,
): Promise<HolderOutcome<AccountCommandResult> | LookupsCapped> {
  const reached = await reachContact(deps, deviceId, address);
  if (!reached.ok) return reached;
  return askAccount(deps, deviceId, { type: 'account-presence-subscribe', address });
}
