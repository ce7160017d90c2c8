import type { ReactionInput, SendAttachmentInput } from '@mgw/contracts';
import { sendMessage, type SendDeps, type SendOutcome } from '../../features/send/send-message.js';

/**
 * What the operator sends in a chat: one text, one attachment (its caption inside it), or a
 * reaction to one of the chat's messages (`emoji: ""` removes ours) — each field judged by the
 * public /send's own rules (admin/chats/mount.ts).
 */
export type ReplyContent =
  { text: string } | { attachment: SendAttachmentInput } | { reaction: ReactionInput };

/**
 * An operator's reply in a chat of the dashboard's Chats page: a text, an attachment or a reaction
 * to the chat's contact or group, accepted exactly as a public `POST /send` of `{ to: chatId, … }`
 * by the device is (the same use case): the paced queue, the accept script with its quotas and
 * queue cap, opt-outs and the account's blocklist all apply, an attachment over 10 MB is refused as
 * /send refuses it (413), a reaction's target is resolved as /send resolves it (our messageId of a
 * message of the chat, sent or received: 404 for none), and a refusal is the same outcome.
 *
 * Rate limit: no hit is handed over, so the reply counts against no per-token /send limit (an
 * admin session has no token, and one person typing replies is no burst). What bounds it is what
 * bounds every message of the device: its pacing, its daily caps and its queue cap (429).
 */
export function replyInChat(
  deps: SendDeps,
  deviceId: string,
  chatId: string,
  content: ReplyContent,
): Promise<SendOutcome> {
  return sendMessage(deps, deviceId, { to: chatId, ...content });
}
