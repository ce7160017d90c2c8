import type { GroupDetail } from '@mgw/contracts';
import { askHolder, type DeviceHolder, type HolderOutcome } from '../holder/index.js';

/**
 * One group and its members (GET /groups/:id), as the device's holder knows it. A group the account
 * is not in fails with the holder's `not-found` (or `forbidden`) code.
 */
export function getGroup(
  holder: DeviceHolder,
  deviceId: string,
  groupId: string,
): Promise<HolderOutcome<{ group: GroupDetail }>> {
  return askHolder(holder, deviceId, { type: 'group-get', groupId });
}
