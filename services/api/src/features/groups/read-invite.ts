import type { GroupInvite } from '@mgw/contracts';
import { askHolder, type DeviceHolder, type HolderOutcome } from '../holder/index.js';

/** A group's current invite code and link (GET /groups/:id/invite), which only an admin may read. */
export function readInvite(
  holder: DeviceHolder,
  deviceId: string,
  groupId: string,
): Promise<HolderOutcome<{ invite: GroupInvite }>> {
  return askHolder(holder, deviceId, { type: 'group-invite', groupId, revoke: false });
}
