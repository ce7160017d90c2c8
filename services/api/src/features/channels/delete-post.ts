import { isRefusal, type Refusal } from '../../enqueue/refusal.js';
import { reviseMessage, type ReviseDeps } from '../send/index.js';
import { findPost } from './find-post.js';

/** How a delete went. */
export type PostDeleteOutcome =
  /** It was still queued or scheduled: it left the queue and is never sent. */
  | { ok: true; data: { messageId: string; status: 'deleted' } }
  /** It was sent: a revision of its own deletes it for the channel's readers (`deleteMessageId`). */
  | { ok: true; data: { messageId: string; deleteMessageId: string; status: 'deleting' } }
  | { ok: false; reason: 'post_not_found' }
  /** Refused as any delete is (failed, deleted already, being sent now, past WhatsApp's window…). */
  | { ok: false; reason: 'refused'; refusal: Refusal };

/** DELETE /channels/:id/posts/:messageId: a post of this device to this channel taken back. */
export async function deletePost(
  s: ReviseDeps,
  deviceId: string,
  channelId: string,
  messageId: string,
): Promise<PostDeleteOutcome> {
  const found = await findPost(s, deviceId, channelId, messageId);
  if (!found.ok) return found;
  const post = found.data;
  const revised = await reviseMessage(s, deviceId, { to: post.to, delete: { messageId: post.messageId } });
  if (isRefusal(revised)) return { ok: false, reason: 'refused', refusal: revised };
  if (revised.kind === 'deleted') return { ok: true, data: { messageId: post.messageId, status: 'deleted' } };
  return {
    ok: true,
    data: { messageId: post.messageId, deleteMessageId: revised.messageId, status: 'deleting' },
  };
}
