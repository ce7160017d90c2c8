import type { proto } from '@whiskeysockets/baileys';
import type { InboxMessage } from './directory.js';

/** A text's link preview as the contact's phone shows it (title, description, URL, thumbnail size). */
export function previewOf(ext: proto.Message.IExtendedTextMessage): Pick<InboxMessage, 'preview'> {
  if (!ext.title && !ext.matchedText) return {};
  return {
    preview: {
      ...(ext.title ? { title: ext.title } : {}),
      ...(ext.description ? { description: ext.description } : {}),
      ...(ext.matchedText ? { url: ext.matchedText } : {}),
      ...(ext.jpegThumbnail?.length ? { thumbnailBytes: ext.jpegThumbnail.length } : {}),
    },
  };
}
