import type { MessageRecord } from '@mgw/contracts';
import { isRefusal, type Refusal } from '../../enqueue/refusal.js';
import { reviseMessage, type ReviseDeps } from '../send/index.js';

/**
 * PATCH /channels/:id/posts/:messageId: a post's text edited by a revision of its own, queued and
 * paced like a send (`editMessageId`); refused as any edit is (not a sent text, past WhatsApp's
 * window…). `post` is the post's record (find-post.ts).
 */
export async function editPost(
  deps: ReviseDeps,
  deviceId: string,
  post: MessageRecord,
  text: string,
): Promise<
  | { ok: true; data: { messageId: string; editMessageId: string; status: 'editing' } }
  | { ok: false; reason: 'refused'; refusal: Refusal }
> {
  const revised = await reviseMessage(deps, deviceId, {
    to: post.to,
    edit: { messageId: post.messageId, text },
  });
  if (isRefusal(revised)) return { ok: false, reason: 'refused', refusal: revised };
  return {
    ok: true,
    data: { messageId: post.messageId, editMessageId: revised.messageId, status: 'editing' },
  };
}
