/**
 * An edit or a delete for everyone (POST /send `edit` / `delete`): a message of its own, sent to
 * the target's chat, that names the target by its WhatsApp id. WhatsApp's window is checked again
 * right before the socket write (the API checked it at accept time, but the message may have
 * waited in the queue since); once sent, the target's record takes the edit (sealed, with its
 * history) or ends `deleted`. Its own record keeps what it changes (`revises`, sealed), for the
 * admin views.
 */
import {
  DELETE_WINDOW_MS,
  EDIT_WINDOW_MS,
  FAILURE_REASONS,
  type MessageContent,
  type MessageRecord,
  type SendJobData,
} from '@mgw/contracts';
import type { SendAttempt } from '@mgw/messenger';
import type { JobSender } from './send-engine.js';
import type { MessageKindStore, MessageRevisions, MessageStore } from '@mgw/store';
import { PermanentSendError } from './send-errors.js';

export interface RevisionDeps {
  sender: JobSender;
  messages: MessageStore;
  revisions: MessageRevisions;
  /** Keeps on the edit's or delete's own record what it changes (the admin views name it). */
  kinds: Pick<MessageKindStore, 'keepRevision'>;
}

const SENT = new Set(['sent', 'delivered', 'read']);

export async function sendRevision(
  data: SendJobData,
  content: MessageContent,
  jid: string,
  deps: RevisionDeps,
  attempt?: SendAttempt,
): Promise<void> {
  const targetId = (content.edit ?? content.delete)!.messageId;
  const target = await deps.messages.getRecord(data.deviceId, targetId);
  const edit = content.edit;
  // First, so a refused one shows what it tried too (its content leaves with its last message).
  await deps.kinds.keepRevision(data.deviceId, data.messageId, {
    messageId: targetId,
    action: edit ? 'edit' : 'delete',
    ...(edit ? { text: edit.text } : {}),
  });
  refuseUnless(target, edit ? EDIT_WINDOW_MS : DELETE_WINDOW_MS);
  const platformId = target!.platformMessageId;
  if (edit && (await deps.sender.sentText(platformId)) !== true)
    throw new PermanentSendError(FAILURE_REASONS.revisionRefused, 'only a sent text can be edited');
  await deps.sender.send(
    {
      jid,
      platformMessageId: data.platformMessageId,
      revision: { targetPlatformMessageId: platformId, ...(edit ? { text: edit.text } : {}) },
      // A status's delete goes to the viewers it went to.
      ...(content.status ? { status: { audience: content.status.audience } } : {}),
    },
    attempt,
  );
  const at = new Date();
  if (edit) {
    await deps.revisions.recordEdit({
      deviceId: data.deviceId,
      messageId: targetId,
      platformMessageId: platformId,
      direction: 'outbound',
      phone: target!.to,
      editId: data.platformMessageId,
      text: edit.text,
      at,
    });
  } else {
    await deps.messages.markDeleted(
      { deviceId: data.deviceId, messageId: targetId } as SendJobData,
      at,
      false,
    );
  }
}

/** The target must be a sent message of ours still within WhatsApp's window. */
function refuseUnless(target: MessageRecord | undefined, windowMs: number): void {
  const sentAt = target?.sentAt ? Date.parse(target.sentAt) : NaN;
  if (!target || !SENT.has(target.status) || !(Date.now() - sentAt < windowMs))
    throw new PermanentSendError(
      FAILURE_REASONS.revisionRefused,
      "the target is not a sent message within WhatsApp's window",
    );
}
