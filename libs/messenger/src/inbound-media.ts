import { createDecipheriv, createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { extractMessageContent, getMediaKeys, proto, type MediaType } from '@whiskeysockets/baileys';
import type { InboundAttachmentType } from './inbound-message.js';

/** WhatsApp's media CDN, for a message that carries only its `directPath`. */
const MEDIA_HOST = 'https://mmg.whatsapp.net';
/** Encrypted media ends with the first 10 bytes of an HMAC-SHA256 over IV and ciphertext. */
const MAC_LENGTH = 10;

export class MediaDecryptError extends Error {
  override name = 'MediaDecryptError';
}

interface MediaFields {
  url?: string | null;
  directPath?: string | null;
  mediaKey?: Uint8Array | null;
  fileSha256?: Uint8Array | null;
  mimetype?: string | null;
  fileName?: string | null;
}

const FIELDS: [keyof proto.IMessage, InboundAttachmentType][] = [
  ['imageMessage', 'image'],
  ['videoMessage', 'video'],
  ['audioMessage', 'audio'],
  ['documentMessage', 'document'],
  ['stickerMessage', 'sticker'],
];

/**
 * Downloads and decrypts the attachment of an incoming message (the WebMessageInfo bytes kept
 * when it arrived): the encrypted file is fetched with `fetchBytes` (the caller's guarded
 * outbound client), its MAC checked, then it is decrypted (AES-256-CBC with keys derived from the
 * message's media key, as Baileys and the phones do) and checked against the message's SHA-256.
 */
export async function downloadInboundMedia(
  mediaMessage: Buffer,
  fetchBytes: (url: string) => Promise<Buffer>,
): Promise<{ bytes: Buffer; mimeType: string; fileName?: string }> {
  const msg = proto.WebMessageInfo.decode(mediaMessage);
  const content = extractMessageContent(msg.message);
  const found = FIELDS.map(
    ([field, type]) => [content?.[field] as MediaFields | null | undefined, type] as const,
  ).find(([media]) => media);
  const [media, type] = found ?? [undefined, undefined];
  if (!media || !type || !media.mediaKey) throw new MediaDecryptError('the message carries no media');
  const url = mediaUrlOf(media);
  if (!url) throw new MediaDecryptError('the message carries no media location');
  const bytes = await decryptMedia(await fetchBytes(url), media.mediaKey, type, media.fileSha256);
  return {
    bytes,
    mimeType: media.mimetype ?? 'application/octet-stream',
    ...(media.fileName ? { fileName: media.fileName } : {}),
  };
}

/**
 * Where a media file is fetched: its URL, or WhatsApp's CDN and its `directPath` (a path: one not
 * starting with `/` could name another host, as `@host` would).
 */
export function mediaUrlOf(media: { url?: string | null; directPath?: string | null }): string | undefined {
  return media.url || (media.directPath?.startsWith('/') ? `${MEDIA_HOST}${media.directPath}` : undefined);
}

/**
 * Decrypts a media file as fetched (its MAC checked, then AES-256-CBC with keys derived from the
 * media key for its `type`, as Baileys and the phones do) and checks it against `fileSha256`.
 */
export async function decryptMedia(
  encrypted: Buffer,
  mediaKey: Uint8Array,
  type: MediaType,
  fileSha256?: Uint8Array | null,
): Promise<Buffer> {
  if (encrypted.length <= MAC_LENGTH) throw new MediaDecryptError('the media file is empty');
  const { iv, cipherKey, macKey } = await getMediaKeys(mediaKey, type);
  const body = encrypted.subarray(0, encrypted.length - MAC_LENGTH);
  const mac = createHmac('sha256', Buffer.from(macKey ?? []))
    .update(iv)
    .update(body)
    .digest()
    .subarray(0, MAC_LENGTH);
  if (!timingSafeEqual(mac, encrypted.subarray(encrypted.length - MAC_LENGTH)))
    throw new MediaDecryptError('the media file failed its MAC check');
  const decipher = createDecipheriv('aes-256-cbc', cipherKey, iv);
  const bytes = Buffer.concat([decipher.update(body), decipher.final()]);
  if (fileSha256?.length && !createHash('sha256').update(bytes).digest().equals(Buffer.from(fileSha256)))
    throw new MediaDecryptError('the media file does not match its checksum');
  return bytes;
}
