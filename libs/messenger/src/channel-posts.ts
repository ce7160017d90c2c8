import { extractMessageContent, getContentType, type WAMessage } from '@whiskeysockets/baileys';
import { isNewsletterAddress } from '@mgw/contracts';
import { kindReceivedAt } from './inbound-kinds.js';

/** A post of a channel the account follows, as WhatsApp delivered it (plaintext, not Signal). */
export interface ChannelPost {
  channelId: string;
  platformMessageId: string;
  serverId?: string;
  text?: string;
  kind?: string;
  postedAt: Date;
}

/**
 * A channel post from `messages.upsert`: Baileys gives a newsletter's message its channel as
 * `remoteJid` (`<digits>@newsletter`) and its number in the channel as `key.server_id`. The
 * account's own posts (`fromMe`) are not news to it.
 */
export function parseChannelPost(msg: WAMessage): ChannelPost | undefined {
  const key = msg.key as WAMessage['key'] & { server_id?: string };
  if (key.fromMe || !key.id || !msg.message || !isNewsletterAddress(key.remoteJid)) return undefined;
  const content = extractMessageContent(msg.message);
  if (!content) return undefined;
  const type = getContentType(content);
  const text =
    content.conversation ??
    content.extendedTextMessage?.text ??
    content.imageMessage?.caption ??
    content.videoMessage?.caption ??
    content.documentMessage?.caption ??
    undefined;
  const kind =
    type && type !== 'conversation' && type !== 'extendedTextMessage'
      ? type.replace(/Message$/, '')
      : undefined;
  return {
    channelId: key.remoteJid!,
    platformMessageId: key.id,
    ...(key.server_id ? { serverId: String(key.server_id) } : {}),
    ...(text != null ? { text } : {}),
    ...(kind ? { kind } : {}),
    postedAt: kindReceivedAt(msg),
  };
}
