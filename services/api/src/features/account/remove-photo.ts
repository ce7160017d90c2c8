import type { HolderOutcome } from '../holder/index.js';
import { askProfile, type AccountDeps, type ProfileData } from './account-deps.js';

/** DELETE /profile/photo: the account's photo removed; the answer is the profile now. */
export function removePhoto(
  deps: Pick<AccountDeps, 'holder'>,
  deviceId: string,
): Promise<HolderOutcome<ProfileData>> {
  return askProfile(deps, deviceId, { type: 'account-photo-remove' });
}
