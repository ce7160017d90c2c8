/**
 * Sending a message kind (reaction, location, contact cards, poll): its fields are kept on the
 * message's record first (sealed, in the request's shape; a poll's secret made once, so a retry
 * sends the same poll), then Baileys puts it on the socket.
 */
import { FAILURE_REASONS, messageKindOf, type MessageContent, type SendJobData } from '@mgw/contracts';
import type { OutgoingKind, QuoteTarget, SendAttempt } from '@mgw/messenger';
import type { JobSender } from './send-engine.js';
import type { MessageKindStore } from '@mgw/store';
import { PermanentSendError } from './send-errors.js';

export interface SendKindDeps {
  sender: JobSender;
  kinds: MessageKindStore;
}

/** True when the content is a message kind (sent by sendKind, not as text/media). */
export function isKindContent(content: MessageContent): boolean {
  return messageKindOf(content) !== undefined;
}

/** Keeps the kind on the (claimed) message's record and sends it; `quoted` as for a text. */
export async function sendKind(
  data: SendJobData,
  content: MessageContent,
  jid: string,
  quoted: QuoteTarget | undefined,
  deps: SendKindDeps,
  attempt?: SendAttempt,
): Promise<void> {
  await deps.kinds.keep(data.deviceId, data.messageId, content);
  await deps.sender.send(
    {
      jid,
      platformMessageId: data.platformMessageId,
      kind: await outgoingKind(data, content, deps),
      quoted,
    },
    attempt,
  );
}

async function outgoingKind(
  data: SendJobData,
  content: MessageContent,
  deps: SendKindDeps,
): Promise<OutgoingKind> {
  if (content.reaction) {
    // Resolved when the request was accepted; a content without it was not made by this API.
    if (!content.reactionTarget)
      throw new PermanentSendError(FAILURE_REASONS.replyTargetNotFound, 'the reaction has no target');
    return { type: 'reaction', emoji: content.reaction.emoji, target: content.reactionTarget };
  }
  if (content.location) return { type: 'location', location: content.location };
  if (content.contacts) return { type: 'contacts', contacts: content.contacts };
  if (content.poll) {
    const secret = await deps.kinds.pollSecret(data.deviceId, data.messageId);
    return { type: 'poll', poll: content.poll, secret };
  }
  throw new PermanentSendError(FAILURE_REASONS.contentExpired, 'the content has no message kind');
}
