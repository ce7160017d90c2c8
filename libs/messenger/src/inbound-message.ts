import { extractMessageContent, isPnUser, jidDecode, proto, type WAMessage } from '@whiskeysockets/baileys';

export type InboundAttachmentType = 'image' | 'video' | 'audio' | 'document' | 'sticker';

/** A message a contact wrote to the linked account, as the gateway keeps it. */
export interface InboundMessage {
  platformMessageId: string;
  /** The contact's phone number (digits). */
  from: string;
  text?: string;
  attachment?: { type: InboundAttachmentType; mimeType: string; fileName?: string; size: number };
  /** The WhatsApp id of the message it quotes, if any. */
  quotedPlatformMessageId?: string;
  receivedAt: Date;
  /** The message (WebMessageInfo bytes) when it carries media: what a later download needs. */
  mediaMessage?: Buffer;
}

const MEDIA_FIELDS: [keyof proto.IMessage, InboundAttachmentType][] = [
  ['imageMessage', 'image'],
  ['videoMessage', 'video'],
  ['audioMessage', 'audio'],
  ['documentMessage', 'document'],
  ['stickerMessage', 'sticker'],
];

interface MediaFields {
  mimetype?: string | null;
  fileName?: string | null;
  fileLength?: number | { toNumber(): number } | null;
  caption?: string | null;
  contextInfo?: proto.IContextInfo | null;
}

/** The contact's phone, from the chat id (a phone-number JID, or its alternative when it is a LID). */
function phoneOf(msg: WAMessage): string | undefined {
  for (const jid of [msg.key.remoteJid, msg.key.remoteJidAlt]) {
    if (jid && isPnUser(jid)) return jidDecode(jid)?.user;
  }
  return undefined;
}

/**
 * What we keep of an incoming message: one-to-one chats only (no groups, broadcasts or our own
 * messages), text and/or one attachment; anything else (reactions, protocol messages) is skipped.
 */
export function parseInbound(msg: WAMessage): InboundMessage | undefined {
  if (msg.key.fromMe || !msg.key.id || !msg.message) return undefined;
  const from = phoneOf(msg);
  if (!from) return undefined;
  const content = extractMessageContent(msg.message);
  if (!content) return undefined;
  let text = content.conversation ?? content.extendedTextMessage?.text ?? undefined;
  let context = content.extendedTextMessage?.contextInfo ?? undefined;
  let attachment: InboundMessage['attachment'];
  for (const [field, type] of MEDIA_FIELDS) {
    const media = content[field] as MediaFields | null | undefined;
    if (!media) continue;
    const size = media.fileLength;
    attachment = {
      type,
      mimeType: media.mimetype ?? 'application/octet-stream',
      ...(media.fileName ? { fileName: media.fileName } : {}),
      size: typeof size === 'number' ? size : (size?.toNumber() ?? 0),
    };
    text ??= media.caption ?? undefined;
    context ??= media.contextInfo ?? undefined;
    break;
  }
  if (text === undefined && !attachment) return undefined;
  const ts = Number(msg.messageTimestamp ?? 0);
  return {
    platformMessageId: msg.key.id,
    from,
    ...(text !== undefined ? { text } : {}),
    ...(attachment ? { attachment } : {}),
    ...(context?.stanzaId ? { quotedPlatformMessageId: context.stanzaId } : {}),
    receivedAt: ts > 0 ? new Date(ts * 1000) : new Date(),
    ...(attachment ? { mediaMessage: Buffer.from(proto.WebMessageInfo.encode(msg).finish()) } : {}),
  };
}
