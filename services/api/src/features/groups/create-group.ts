import type { GroupCreateBody, GroupDetail, GroupParticipantOutcome } from '@mgw/contracts';
import { askHolder, type DeviceHolder, type HolderOutcome } from '../holder/index.js';

/** What a create answers: the new group, and how adding each participant went. */
export interface GroupCreated {
  group?: GroupDetail;
  participants: GroupParticipantOutcome[];
}

/** Creates a group with its subject and first members (POST /groups) through the device's holder. */
export function createGroup(
  holder: DeviceHolder,
  deviceId: string,
  body: GroupCreateBody,
): Promise<HolderOutcome<GroupCreated>> {
  return askHolder(holder, deviceId, {
    type: 'group-create',
    subject: body.subject,
    participants: body.participants,
  });
}
