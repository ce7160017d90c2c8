import type { ProfileBody } from '@mgw/contracts';
import type { HolderOutcome } from '../holder/index.js';
import { askProfile, type AccountDeps, type ProfileData } from './account-deps.js';

/** PATCH /profile: the account's name and/or about changed; the answer is the profile now. */
export function updateProfile(
  deps: Pick<AccountDeps, 'holder'>,
  deviceId: string,
  change: ProfileBody,
): Promise<HolderOutcome<ProfileData>> {
  return askProfile(deps, deviceId, {
    type: 'account-profile-set',
    ...(change.name !== undefined ? { name: change.name } : {}),
    ...(change.about !== undefined ? { about: change.about } : {}),
  });
}
