import { newMessageId, PRIORITY, type ChannelPostBody } from '@mgw/contracts';
import type { MessageAcceptor } from '../../enqueue/message-acceptor.js';
import { isRefusal, type Refusal } from '../../enqueue/refusal.js';
import { contentOf, dueAt, withUploadedMedia, type SendDeps } from '../send/index.js';

export interface ChannelPostDeps extends Pick<SendDeps, 'media'> {
  acceptor: Pick<MessageAcceptor, 'accept'>;
}

export interface ChannelPostAccepted {
  kind: 'accepted';
  messageId: string;
  batchId: string;
  sendAt?: string;
}

/**
 * POST /channels/:id/posts: one message to the channel's JID, accepted through the send pipeline
 * like a status — one job, sent once or failed with a reason, paced as one message, held by
 * `sendAt`, and a batch of one (its `batchId`) so pause, resume and cancel steer it as they steer
 * batches. The caller has checked that the device owns the channel.
 */
export async function postToChannel(
  deps: ChannelPostDeps,
  deviceId: string,
  channelJid: string,
  body: ChannelPostBody,
): Promise<ChannelPostAccepted | Refusal> {
  const shared = contentOf({ ...body, to: channelJid });
  if (isRefusal(shared)) return shared;
  const uploaded = await withUploadedMedia(deps, deviceId, shared.content);
  if (uploaded) return uploaded;
  const sendAt = dueAt(body.sendAt);
  const messageId = newMessageId();
  const accepted = await deps.acceptor.accept({
    deviceId,
    kind: 'send',
    recipients: [channelJid],
    content: shared.content,
    ...(shared.media ? { media: shared.media } : {}),
    ...(sendAt !== undefined ? { sendAt } : {}),
    batchId: messageId,
    messageIds: [messageId],
    priority: PRIORITY.send,
  });
  if (isRefusal(accepted)) return accepted;
  return {
    kind: 'accepted',
    messageId,
    batchId: messageId,
    ...(sendAt !== undefined ? { sendAt: new Date(sendAt).toISOString() } : {}),
  };
}
