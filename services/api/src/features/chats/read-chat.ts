import type { ReadOutcome } from '@mgw/contracts';
import { markRead, type HolderFailure, type ReadDeps } from './mark-read.js';

export type ReadChatOutcome =
  | { ok: true; data: { chatId: string } & ReadOutcome }
  /** The device has no chat of that id. */
  | { ok: false; reason: 'unknown_chat' }
  | HolderFailure;

/**
 * POST /chats/:chatId/read: every unread message of the chat is marked read, its contacts shown
 * the read receipts (as opening the chat on the phone does).
 */
export async function readChat(deps: ReadDeps, deviceId: string, chatId: string): Promise<ReadChatOutcome> {
  if (!(await deps.chats.get(deviceId, chatId))) return { ok: false, reason: 'unknown_chat' };
  const unread = await deps.chats.unread(deviceId, chatId);
  const marked = await markRead(deps, deviceId, chatId, unread);
  return marked.ok ? { ok: true, data: { chatId, ...marked.data } } : marked;
}
