import type { HolderOutcome } from '../holder/index.js';
import { askProfile, type AccountDeps, type ProfileData } from './account-deps.js';

/** GET /profile: the account's profile as WhatsApp has it now. */
export function getProfile(
  deps: Pick<AccountDeps, 'holder'>,
  deviceId: string,
): Promise<HolderOutcome<ProfileData>> {
  return askProfile(deps, deviceId, { type: 'account-profile-get' });
}
