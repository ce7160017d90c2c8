import { inviteCodeOf, type GroupDetail } from '@mgw/contracts';
import { askHolder, type DeviceHolder, type HolderOutcome } from '../holder/index.js';

/**
 * The account joins a group by its invite (POST /groups/join), given as a code or as the
 * https://chat.whatsapp.com/<code> link: the holder is asked with the code alone. A code no group
 * has fails with the holder's `invite-not-found` code.
 */
export function joinGroup(
  holder: DeviceHolder,
  deviceId: string,
  invite: string,
): Promise<HolderOutcome<{ group: GroupDetail }>> {
  // The request's schema accepted it, so it has a code (a link is reduced to its code).
  const code = inviteCodeOf(invite)!;
  return askHolder(holder, deviceId, { type: 'group-join', code });
}
