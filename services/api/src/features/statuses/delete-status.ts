import { PRIORITY, STATUS_JID, STATUS_LIMITS } from '@mgw/contracts';
import type { StatusStore } from '@mgw/store';
import { isRefusal, type Refusal } from '../../enqueue/refusal.js';
import { reviseMessage, type ReviseDeps } from '../send/index.js';

/** How a delete went. */
export type StatusDeleteOutcome =
  /** It was still queued or scheduled: taken out of the queue, nothing of it is ever sent. */
  | { ok: true; data: { messageId: string; status: 'deleted' } }
  /** It was sent: its revoke is queued as a message of its own (`deleteMessageId`). */
  | { ok: true; data: { messageId: string; deleteMessageId: string; status: 'deleting' } }
  /** No status of this device has this id (another device's, or gone). */
  | { ok: false; reason: 'not_found' }
  /** It failed (WhatsApp never had it) or was deleted already: there is nothing to take back. */
  | { ok: false; reason: 'not_deletable' }
  /** Its day is over (WhatsApp shows a status for 24 hours), or its audience is no longer kept. */
  | { ok: false; reason: 'expired' }
  /** The queue refused its removal or its revoke (the device's link changed, its quota is full…). */
  | { ok: false; reason: 'refused'; refusal: Refusal };

/**
 * DELETE /statuses/:id: a status still queued or scheduled leaves the queue at once; a sent one
 * within its day is revoked for its viewers by a message of its own, queued to the same audience.
 */
export async function deleteStatus(
  s: ReviseDeps & { statuses: Pick<StatusStore, 'has' | 'audience'> },
  deviceId: string,
  id: string,
): Promise<StatusDeleteOutcome> {
  const record = await s.messages.get(deviceId, id);
  if (!record || record.to !== STATUS_JID || !(await s.statuses.has(deviceId, id)))
    return { ok: false, reason: 'not_found' };
  if (record.status === 'queued' || record.status === 'scheduled') {
    const outcome = await reviseMessage(s, deviceId, { to: STATUS_JID, delete: { messageId: id } });
    if (isRefusal(outcome)) return { ok: false, reason: 'refused', refusal: outcome };
    return { ok: true, data: { messageId: id, status: 'deleted' } };
  }
  if (!['sent', 'delivered', 'read'].includes(record.status)) return { ok: false, reason: 'not_deletable' };
  if (!record.sentAt || Date.now() - Date.parse(record.sentAt) >= STATUS_LIMITS.liveMs)
    return { ok: false, reason: 'expired' };
  const audience = await s.statuses.audience(deviceId, id);
  if (!audience) return { ok: false, reason: 'expired' };
  const accepted = await s.acceptor.accept({
    deviceId,
    kind: 'send',
    recipients: [STATUS_JID],
    content: { delete: { messageId: id }, status: { audience } },
    priority: PRIORITY.send,
  });
  if (isRefusal(accepted)) return { ok: false, reason: 'refused', refusal: accepted };
  return {
    ok: true,
    data: { messageId: id, deleteMessageId: accepted.jobs[0]!.messageId, status: 'deleting' },
  };
}
