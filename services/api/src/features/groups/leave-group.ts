import { askHolder, type DeviceHolder, type HolderOutcome } from '../holder/index.js';

/** The account leaves a group (POST /groups/:id/leave) through the device's holder. */
export async function leaveGroup(
  holder: DeviceHolder,
  deviceId: string,
  groupId: string,
): Promise<HolderOutcome<{ id: string; left: true }>> {
  const outcome = await askHolder(holder, deviceId, { type: 'group-leave', groupId });
  return outcome.ok ? { ok: true, data: { id: groupId, left: true } } : outcome;
}
