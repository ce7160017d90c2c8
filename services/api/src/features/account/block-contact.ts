import type { AccountCommandResult } from '@mgw/contracts';
import type { HolderOutcome } from '../holder/index.js';
import { askAccount, type AccountDeps } from './account-deps.js';
import { reachContact, type ContactLookups, type LookupsCapped } from './contact-lookups.js';

/**
 * POST /blocklist and DELETE /blocklist/:number: the contact blocked or unblocked at WhatsApp;
 * the holder keeps the blocklist in Redis current from what WhatsApp answers.
 */
export async function blockContact(
  deps: Pick<AccountDeps, 'holder'> & ContactLookups,
  deviceId: string,
  address: string,
  action: 'block' | 'unblock',
): Promise<HolderOutcome<AccountCommandResult> | LookupsCapped> {
  const reached = await reachContact(deps, deviceId, address);
  if (!reached.ok) return reached;
  return askAccount(deps, deviceId, { type: 'account-block', address, action });
}
