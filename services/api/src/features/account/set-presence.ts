import type { AccountCommandResult, AccountPresence } from '@mgw/contracts';
import type { HolderOutcome } from '../holder/ask-holder.js';
import { askAccount, type AccountDeps } from './account-deps.js';

/**
 * PUT /presence: the account shown available or unavailable to its contacts (WhatsApp needs a
 * name for it: the holder answers `no-name` without one).
 */
export function setPresence(
  deps: Pick<AccountDeps, 'holder'>,
  deviceId: string,
  presence: AccountPresence,
): Promise<HolderOutcome<AccountCommandResult>> {
  return askAccount(deps, deviceId, { type: 'account-presence-set', presence });
}
