import type { GroupSummary } from '@mgw/contracts';
import { askHolder, type DeviceHolder, type HolderOutcome } from '../holder/index.js';

/**
 * The device's groups (GET /groups), as its holder's group cache has them: only the sender holding
 * the device has its WhatsApp socket, so it is asked. The holder's answer, or why there is none.
 */
export function listGroups(
  holder: DeviceHolder,
  deviceId: string,
): Promise<HolderOutcome<{ groups: GroupSummary[] }>> {
  return askHolder(holder, deviceId, { type: 'groups-list' });
}
