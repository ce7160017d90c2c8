import type { GroupInvite } from '@mgw/contracts';
import { askHolder, type DeviceHolder, type HolderOutcome } from '../holder/index.js';

/**
 * Revokes a group's invite link (POST /groups/:id/invite/revoke): the old link stops working and
 * the holder answers the new one.
 */
export function revokeInvite(
  holder: DeviceHolder,
  deviceId: string,
  groupId: string,
): Promise<HolderOutcome<{ invite: GroupInvite }>> {
  return askHolder(holder, deviceId, { type: 'group-invite', groupId, revoke: true });
}
