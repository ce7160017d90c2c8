import type { GroupAction, GroupParticipantsBody } from '@mgw/contracts';
import { askHolder, type DeviceHolder, type HolderOutcome } from '../holder/index.js';
import type { GroupCreated } from './create-group.js';

/** What a participant change answers: the group and the action, then how it went for each member. */
export type ParticipantsChanged = { id: string; action: GroupAction } & GroupCreated;

/**
 * Adds, removes, promotes or demotes members of a group (POST /groups/:id/participants) through
 * the device's holder. WhatsApp answers each member on its own, so a change that went through for
 * some members only is still a success: each member's outcome says how it went.
 */
export async function changeParticipants(
  holder: DeviceHolder,
  deviceId: string,
  groupId: string,
  body: GroupParticipantsBody,
): Promise<HolderOutcome<ParticipantsChanged>> {
  const outcome = await askHolder<GroupCreated>(holder, deviceId, {
    type: 'group-participants',
    groupId,
    action: body.action,
    participants: body.participants,
  });
  return outcome.ok ? { ok: true, data: { id: groupId, action: body.action, ...outcome.data } } : outcome;
}
