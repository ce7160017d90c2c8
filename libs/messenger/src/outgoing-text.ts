import type { AnyMessageContent, proto, WAUrlInfo } from '@whiskeysockets/baileys';

/** A link preview the gateway fetched itself (through the guarded outbound client). */
export interface LinkPreviewInput {
  /** The URL as it appears in the text. */
  matchedText: string;
  url: string;
  title: string;
  description?: string;
  /** A small JPEG shown beside the preview. */
  jpegThumbnail?: Buffer;
}

/** An edit or a delete for everyone of one of our earlier messages (its WhatsApp id). */
export interface RevisionInput {
  targetPlatformMessageId: string;
  /** The new text (an edit); absent: a delete for everyone (a revoke). */
  text?: string;
}

/**
 * The Baileys content of a text, an edit or a revoke. `linkPreview` is always given (a preview or
 * null): left undefined, Baileys would fetch the URL itself, outside the outbound guard.
 */
export function textContent(
  jid: string,
  text: string | undefined,
  preview: LinkPreviewInput | undefined,
  revision: RevisionInput | undefined,
): AnyMessageContent {
  if (revision) {
    const key = { remoteJid: jid, fromMe: true, id: revision.targetPlatformMessageId };
    if (revision.text === undefined) return { delete: key };
    return { text: revision.text, edit: key, linkPreview: null };
  }
  return { text: text ?? '', linkPreview: preview ? urlInfo(preview) : null };
}

function urlInfo(p: LinkPreviewInput): WAUrlInfo {
  return {
    'canonical-url': p.url,
    'matched-text': p.matchedText,
    title: p.title,
    ...(p.description !== undefined ? { description: p.description } : {}),
    ...(p.jpegThumbnail ? { jpegThumbnail: p.jpegThumbnail } : {}),
  };
}

/** Whether a sent message (its stored proto) is a text, the only kind WhatsApp lets us edit. */
export function isTextMessage(message: proto.IMessage): boolean {
  return Boolean(message.conversation ?? message.extendedTextMessage?.text);
}
