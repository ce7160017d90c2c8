import {
  DELETE_WINDOW_MS,
  EDIT_WINDOW_MS,
  PRIORITY,
  type MessageContent,
  type MessageRecord,
  type SendBody,
  type SendJobData,
} from '@mgw/contracts';
import type { RedisClient } from '@mgw/common';
import { ContactIdentities, type MessageStore } from '@mgw/store';
import type { MessageAcceptor } from '../../enqueue/message-acceptor.js';
import { invalid, isRefusal, refused, type Refusal } from '../../enqueue/refusal.js';

export interface ReviseDeps {
  acceptor: Pick<MessageAcceptor, 'accept'>;
  /** The target's record, and (a queued one deleted) its job and its end. */
  messages: Pick<MessageStore, 'get' | 'job' | 'markDeleted'>;
  /** Reads the device's phone <-> LID map (a revision may name the recipient by its other identity). */
  redis: RedisClient;
}

const SENT = new Set(['sent', 'delivered', 'read']);

/** An edit or delete: queued as a message of its own, or (a queued message deleted) done at once. */
export type ReviseOutcome =
  { kind: 'accepted'; messageId: string } | { kind: 'deleted'; messageId: string } | Refusal;

/**
 * POST /send with `edit` or `delete` (see revisions.ts): one of our messages, to its own recipient.
 * A sent message within WhatsApp's window gets a message of its own (an edit, or a revoke), queued
 * and paced like any send (accepted, its messageId); one past the window is refused and nothing
 * is sent. A `delete` of a message still queued takes it out of the queue at once (deleted, the
 * record reads `deleted` and its job sends nothing); one whose send attempt already started is
 * refused: deleted once sent, it would be a revoke.
 */
export async function reviseMessage(
  deps: ReviseDeps,
  deviceId: string,
  body: SendBody,
): Promise<ReviseOutcome> {
  const targetId = (body.edit ?? body.delete)!.messageId;
  if (typeof body.to !== 'string')
    return invalid([
      { path: ['to'], message: 'to must be the one recipient of the message edited or deleted' },
    ]);
  const target = await deps.messages.get(deviceId, targetId);
  if (!target || target.deviceId !== deviceId || target.direction === 'inbound')
    return refused('revision_target_not_found');
  if (!(await namesRecipient(deps, target, body.to)))
    return invalid([{ path: ['to'], message: 'to must be the recipient of the message edited or deleted' }]);
  // The revision goes to the target's own chat (its `to`), whichever identity the request named.
  if (body.edit) {
    if (!SENT.has(target.status) || target.kind !== 'send') return refused('not_editable');
    if (!within(target, EDIT_WINDOW_MS)) return refused('edit_window_passed');
    return accept(deps, deviceId, target.to, { edit: { messageId: targetId, text: body.edit.text } });
  }
  if (target.status === 'queued' || target.status === 'scheduled')
    return deleteQueued(deps, deviceId, target);
  if (!SENT.has(target.status)) return refused('not_deletable');
  if (!within(target, DELETE_WINDOW_MS)) return refused('delete_window_passed');
  return accept(deps, deviceId, target.to, { delete: { messageId: targetId } });
}

/**
 * Whether `to` names the target's recipient: its `to` as sent (a phone, a `<digits>@lid`, a group's
 * `<id>@g.us`), or the other identity of that contact as the device's phone <-> LID map knows it, so
 * a message sent to a phone can be edited by the contact's LID and the reverse.
 */
export async function namesRecipient(
  deps: { redis: RedisClient },
  target: MessageRecord,
  to: string,
): Promise<boolean> {
  if (target.to === to) return true;
  const contact = await new ContactIdentities(deps.redis).resolve(target.deviceId, target.to);
  return contact.phone === to || contact.lid === to;
}

/** Whether less than `windowMs` passed since the target was sent (a target never sent is not). */
function within(target: MessageRecord, windowMs: number): boolean {
  const sentAt = target.sentAt ? Date.parse(target.sentAt) : NaN;
  return Date.now() - sentAt < windowMs;
}

async function accept(
  deps: ReviseDeps,
  deviceId: string,
  to: string,
  content: MessageContent,
): Promise<ReviseOutcome> {
  const accepted = await deps.acceptor.accept({
    deviceId,
    kind: 'send',
    recipients: [to],
    content,
    priority: PRIORITY.send,
  });
  if (isRefusal(accepted)) return accepted;
  return { kind: 'accepted', messageId: accepted.jobs[0]!.messageId };
}

/** A queued message (not an OTP: its caller waits for it) deleted before any attempt: never sent. */
async function deleteQueued(
  deps: ReviseDeps,
  deviceId: string,
  target: MessageRecord,
): Promise<ReviseOutcome> {
  if (target.kind !== 'send') return refused('not_deletable');
  const job = await deps.messages.job(deviceId, target.messageId);
  const outcome = await deps.messages.markDeleted(
    job ?? ({ deviceId, messageId: target.messageId } as SendJobData),
    new Date(),
    true,
  );
  if (outcome !== 'expired') return refused('not_deletable');
  return { kind: 'deleted', messageId: target.messageId };
}
