import { sendMessage, type SendDeps, type SendOutcome } from '../../features/send/send-message.js';

/**
 * An operator's reply in a chat of the dashboard's Chats page: one text to the chat's contact or
 * group, accepted exactly as a public `POST /send` of `{ to: chatId, text }` by the device is (the
 * same use case): the paced queue, the accept script with its quotas and queue cap, opt-outs and
 * the account's blocklist all apply, and a refusal is the same outcome.
 *
 * Rate limit: no hit is handed over, so the reply counts against no per-token /send limit (an
 * admin session has no token, and one person typing replies is no burst). What bounds it is what
 * bounds every message of the device: its pacing, its daily caps and its queue cap (429).
 */
export function replyInChat(
  deps: SendDeps,
  deviceId: string,
  chatId: string,
  text: string,
): Promise<SendOutcome> {
  return sendMessage(deps, deviceId, { to: chatId, text });
}
