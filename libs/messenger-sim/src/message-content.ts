import { normalizeMessageContent, proto, type MediaType } from '@whiskeysockets/baileys';
import type { InboxMessage } from './directory.js';
import { describeRevision } from './revisions.js';
import { previewOf } from './link-preview.js';
import { describeKind } from './message-kinds.js';

export interface MediaRef {
  mediaType: MediaType;
  mediaKey: Uint8Array;
  directPath?: string | null;
  url?: string | null;
}

export interface DescribedMessage {
  fields: Omit<InboxMessage, 'id' | 'from' | 'receivedAt'>;
  media?: MediaRef;
}

type MediaMessage = {
  mediaKey?: Uint8Array | null;
  directPath?: string | null;
  url?: string | null;
  mimetype?: string | null;
  contextInfo?: proto.IContextInfo | null;
};

const MEDIA_KINDS = [
  ['imageMessage', 'image'],
  ['videoMessage', 'video'],
  ['audioMessage', 'audio'],
  ['documentMessage', 'document'],
  ['stickerMessage', 'sticker'],
] as const;

/**
 * What a message quotes, as its contact sees the quote: the quoted message's id, its author, and
 * the text or caption the quote carries (none when it carries no copy).
 */
function quoteOf(
  context: proto.IContextInfo | null | undefined,
): Pick<InboxMessage, 'quotedId' | 'quotedAuthor' | 'quotedText'> {
  if (!context?.stanzaId) return {};
  const quoted = context.quotedMessage ? normalizeMessageContent(context.quotedMessage) : undefined;
  const text =
    quoted?.conversation ??
    quoted?.extendedTextMessage?.text ??
    quoted?.imageMessage?.caption ??
    quoted?.videoMessage?.caption ??
    quoted?.documentMessage?.caption;
  return {
    quotedId: context.stanzaId,
    ...(context.participant ? { quotedAuthor: context.participant } : {}),
    ...(typeof text === 'string' ? { quotedText: text } : {}),
  };
}

/** Reduces a decrypted `proto.Message` to what a test wants to assert on. */
export function describeMessage(raw: proto.IMessage): DescribedMessage {
  const message = normalizeMessageContent(raw) ?? raw;
  const revision = describeRevision(message);
  if (revision) return { fields: revision };
  if (message.conversation) return { fields: { type: 'text', text: message.conversation } };
  if (message.extendedTextMessage) {
    const ext = message.extendedTextMessage;
    return {
      fields: {
        type: 'text',
        text: ext.text ?? '',
        ...quoteOf(ext.contextInfo),
        ...previewOf(ext),
      },
    };
  }
  const kind = describeKind(message);
  if (kind) return { fields: kind };
  for (const [key, type] of MEDIA_KINDS) {
    const media = message[key] as
      (MediaMessage & { caption?: string | null; fileName?: string | null }) | null | undefined;
    if (!media) continue;
    const fields: DescribedMessage['fields'] = { type, mimetype: media.mimetype ?? undefined };
    if (media.caption) fields.caption = media.caption;
    if (media.fileName) fields.fileName = media.fileName;
    Object.assign(fields, quoteOf(media.contextInfo));
    return {
      fields,
      media: media.mediaKey
        ? { mediaType: type, mediaKey: media.mediaKey, directPath: media.directPath, url: media.url }
        : undefined,
    };
  }
  return { fields: { type: 'other' } };
}
