import {
  DELETE_WINDOW_MS,
  EDIT_WINDOW_MS,
  ERRORS,
  PRIORITY,
  type MessageContent,
  type MessageRecord,
  type SendBody,
  type SendJobData,
} from '@mgw/contracts';
import type { RedisClient } from '@mgw/common';
import { ContactIdentities, type MessageStore } from '@mgw/store';
import { ApiError } from '../http/api-error.js';
import type { Outcome } from '../http/idempotency.js';
import type { MessageAcceptor } from './message-acceptor.js';

export interface ReviseDeps {
  acceptor: MessageAcceptor;
  messages: MessageStore;
  /** Reads the device's phone <-> LID map (a revision may name the recipient by its other identity). */
  redis: RedisClient;
}

const SENT = new Set(['sent', 'delivered', 'read']);

/**
 * POST /send with `edit` or `delete` (see revisions.ts): one of our messages, to its own recipient.
 * A sent message within WhatsApp's window gets a message of its own (an edit, or a revoke), queued
 * and paced like any send (202, its messageId); one past the window is refused (409) and nothing
 * is sent. A `delete` of a message still queued takes it out of the queue at once (200, the record
 * reads `deleted` and its job sends nothing); one whose send attempt already started is refused
 * (409): deleted once sent, it would be a revoke.
 */
export async function reviseMessage(deps: ReviseDeps, deviceId: string, body: SendBody): Promise<Outcome> {
  const targetId = (body.edit ?? body.delete)!.messageId;
  if (typeof body.to !== 'string')
    throw ApiError.invalid([
      { path: ['to'], message: 'to must be the one recipient of the message edited or deleted' },
    ]);
  const target = await deps.messages.get(deviceId, targetId);
  if (!target || target.deviceId !== deviceId || target.direction === 'inbound')
    throw new ApiError(404, ERRORS.revisionTargetNotFound);
  if (!(await namesRecipient(deps, target, body.to)))
    throw ApiError.invalid([
      { path: ['to'], message: 'to must be the recipient of the message edited or deleted' },
    ]);
  // The revision goes to the target's own chat (its `to`), whichever identity the request named.
  if (body.edit) {
    if (!SENT.has(target.status) || target.kind !== 'send') throw new ApiError(409, ERRORS.notEditable);
    refuseAfter(target, EDIT_WINDOW_MS, ERRORS.editWindowPassed);
    return accept(deps, deviceId, target.to, { edit: { messageId: targetId, text: body.edit.text } });
  }
  if (target.status === 'queued' || target.status === 'scheduled')
    return deleteQueued(deps, deviceId, target);
  if (!SENT.has(target.status)) throw new ApiError(409, ERRORS.notDeletable);
  refuseAfter(target, DELETE_WINDOW_MS, ERRORS.deleteWindowPassed);
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

/** 409 once `windowMs` passed since the target was sent. */
function refuseAfter(target: MessageRecord, windowMs: number, error: string): void {
  const sentAt = target.sentAt ? Date.parse(target.sentAt) : NaN;
  if (!(Date.now() - sentAt < windowMs)) throw new ApiError(409, error);
}

async function accept(
  deps: ReviseDeps,
  deviceId: string,
  to: string,
  content: MessageContent,
): Promise<Outcome> {
  const [job] = await deps.acceptor.accept({
    deviceId,
    kind: 'send',
    recipients: [to],
    content,
    priority: PRIORITY.send,
  });
  return { status: 202, body: { success: true, messageId: job!.messageId } };
}

/** A queued message (not an OTP: its caller waits for it) deleted before any attempt: never sent. */
async function deleteQueued(deps: ReviseDeps, deviceId: string, target: MessageRecord): Promise<Outcome> {
  if (target.kind !== 'send') throw new ApiError(409, ERRORS.notDeletable);
  const job = await deps.messages.job(deviceId, target.messageId);
  const outcome = await deps.messages.markDeleted(
    job ?? ({ deviceId, messageId: target.messageId } as SendJobData),
    new Date(),
    true,
  );
  if (outcome !== 'expired') throw new ApiError(409, ERRORS.notDeletable);
  return { status: 200, body: { success: true, messageId: target.messageId, status: 'deleted' } };
}
