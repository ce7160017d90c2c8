import type { GroupDetail, GroupUpdateBody } from '@mgw/contracts';
import { askHolder, type DeviceHolder, type HolderOutcome } from '../holder/index.js';

/**
 * Changes a group's subject, description, announce or locked setting (PATCH /groups/:id): the
 * fields given change, and the holder answers the group as it is now. Only an admin may change a
 * group whose settings are locked: the holder's `not-admin` code.
 */
export function updateGroup(
  holder: DeviceHolder,
  deviceId: string,
  groupId: string,
  changes: GroupUpdateBody,
): Promise<HolderOutcome<{ group: GroupDetail }>> {
  return askHolder(holder, deviceId, { type: 'group-update', groupId, changes });
}
