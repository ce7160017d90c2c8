import type { ReadOutcome } from '@mgw/contracts';
import type { MessageStore } from '@mgw/store';
import { ownMessage } from '../messages/index.js';
import { markRead, type HolderFailure, type ReadDeps } from './mark-read.js';

export type ReadMessageOutcome =
  | { ok: true; data: { messageId: string; chatId: string } & ReadOutcome }
  /** No message of the device has that id, or its WhatsApp key is gone. */
  | { ok: false; reason: 'unknown_message' }
  /** A message the account sent: only one a contact wrote is read. */
  | { ok: false; reason: 'not_inbound' }
  | HolderFailure;

/**
 * POST /messages/:id/read: the message is marked read, and the unread ones before it in its chat
 * too (as opening the chat does). One read already (or past the chat's unread bound) has its
 * receipt sent again, harmlessly.
 */
export async function readMessage(
  deps: ReadDeps & { messages: Pick<MessageStore, 'get'> },
  deviceId: string,
  messageId: string,
): Promise<ReadMessageOutcome> {
  const record = await ownMessage(deps, deviceId, messageId);
  if (!record) return { ok: false, reason: 'unknown_message' };
  if (record.direction !== 'inbound') return { ok: false, reason: 'not_inbound' };
  const target = await deps.inbound.readTarget(deviceId, messageId);
  if (!target) return { ok: false, reason: 'unknown_message' };
  const unread = await deps.chats.unread(deviceId, target.chatId, messageId);
  const extra = unread.includes(messageId) ? [] : [target.key];
  const marked = await markRead(deps, deviceId, target.chatId, unread, extra);
  return marked.ok ? { ok: true, data: { messageId, chatId: target.chatId, ...marked.data } } : marked;
}
