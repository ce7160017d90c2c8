import { createHash } from 'node:crypto';
import { jidEncode, type proto } from '@whiskeysockets/baileys';
import type { InboxMessage, SimUser } from './directory.js';
import { encryptLikePhone, type MediaHost } from './media-host.js';
import { SimError } from './sim-error.js';
import { buildKindMessage, checkKindInput, type InboundKindInput } from './message-kinds.js';

export const ATTACHMENT_TYPES = ['image', 'video', 'audio', 'document', 'sticker'] as const;
export type AttachmentType = (typeof ATTACHMENT_TYPES)[number];

export interface InboundAttachment {
  type: AttachmentType;
  /** The file's bytes, base64. */
  base64: string;
  mimeType?: string;
  fileName?: string;
  caption?: string;
}

/** What a contact's phone sends: a text, an attachment (with `text` as caption), optionally quoting. */
export interface InboundInput extends InboundKindInput {
  text?: string;
  attachment?: InboundAttachment;
  /** Id of one of the account's messages the contact answers to. */
  quotedId?: string;
}

export interface InboundMedia {
  url: string;
  directPath: string;
  /** Hex SHA-256 of the plain file, to compare with what the receiver decrypts. */
  fileSha256: string;
  fileLength: number;
}

const DEFAULT_MIME: Record<AttachmentType, string> = {
  image: 'image/jpeg',
  video: 'video/mp4',
  audio: 'audio/ogg; codecs=opus',
  document: 'application/octet-stream',
  sticker: 'image/webp',
};
const sha256 = (data: Uint8Array): Buffer => createHash('sha256').update(data).digest();

/** Validates input from the control API or an in-process caller; SimError 400 for mistakes. */
export function checkInboundInput(input: InboundInput): void {
  const { text, attachment } = input;
  if (text !== undefined && typeof text !== 'string') throw new SimError('text must be a string', 400);
  if (checkKindInput(input)) {
    if (text || attachment) throw new SimError('a message kind is sent without text or attachment', 400);
    return;
  }
  if (!text && !attachment) throw new SimError('text or attachment is required', 400);
  if (attachment) checkAttachmentInput(attachment, 'attachment');
}

/** Validates an attachment's fields (`where` names it in the error); SimError 400 for mistakes. */
export function checkAttachmentInput(attachment: InboundAttachment, where: string): void {
  if (!attachment || typeof attachment !== 'object') throw new SimError(`${where} must be an object`, 400);
  if (!ATTACHMENT_TYPES.includes(attachment.type))
    throw new SimError(`${where}.type must be one of ${ATTACHMENT_TYPES.join(', ')}`, 400);
  if (typeof attachment.base64 !== 'string' || !attachment.base64)
    throw new SimError(`${where}.base64 is required`, 400);
  for (const key of ['mimeType', 'fileName', 'caption'] as const) {
    const value = attachment[key];
    if (value !== undefined && typeof value !== 'string')
      throw new SimError(`${where}.${key} must be a string`, 400);
  }
}

/**
 * A reply quotes by id; WhatsApp names the quoted message's author (here: the account) and
 * carries a copy of it, which the contact's phone has when the message is still in its inbox.
 */
function quoteOf(contact: SimUser, account: SimUser, quotedId: string): proto.IContextInfo {
  const original = contact.inbox.find((m) => m.id === quotedId && m.from === account.phone);
  return {
    stanzaId: quotedId,
    participant: jidEncode(account.phone, 's.whatsapp.net'),
    ...(original ? { quotedMessage: copyOf(original) } : {}),
  };
}

function copyOf(m: InboxMessage): proto.IMessage | undefined {
  if (m.type === 'text') return { conversation: m.text ?? '' };
  // Only texts and media are quoted with a copy (a kind's quote carries the id alone).
  if (!(ATTACHMENT_TYPES as readonly string[]).includes(m.type)) return undefined;
  const stub = { mimetype: m.mimetype, caption: m.caption, ...(m.fileName ? { fileName: m.fileName } : {}) };
  return { [`${m.type}Message`]: stub };
}

/** Encrypts a file like a phone does (AES-256-CBC, HMAC-SHA256 truncated to 10 bytes) and uploads it. */
async function uploadAttachment(
  media: MediaHost,
  type: AttachmentType,
  plain: Buffer,
): Promise<{ fields: proto.Message.IImageMessage; info: InboundMedia }> {
  const { mediaKey, body } = await encryptLikePhone(plain, type);
  const { url, directPath } = media.uploadFromPhone(type, body);
  const fileSha256 = sha256(plain);
  return {
    fields: {
      url,
      directPath,
      mediaKey,
      fileSha256,
      fileEncSha256: sha256(body),
      fileLength: plain.length,
      mediaKeyTimestamp: Math.floor(Date.now() / 1000),
    },
    info: { url, directPath, fileSha256: fileSha256.toString('hex'), fileLength: plain.length },
  };
}

/** The `proto.Message` a contact's phone encrypts for the account's devices. */
export async function buildInboundMessage(
  media: MediaHost,
  contact: SimUser,
  account: SimUser,
  input: InboundInput,
): Promise<{ message: proto.IMessage; media?: InboundMedia }> {
  const kind = buildKindMessage(contact, account, input);
  if (kind) return { message: kind };
  const contextInfo = input.quotedId ? quoteOf(contact, account, input.quotedId) : undefined;
  const { attachment } = input;
  if (!attachment) {
    const text = input.text ?? '';
    return { message: contextInfo ? { extendedTextMessage: { text, contextInfo } } : { conversation: text } };
  }
  return attachmentMessage(media, attachment, input.text, contextInfo);
}

/**
 * A phone's message carrying `attachment` (encrypted and uploaded to the media host as a phone
 * does), with `attachment.caption` or else `text` as its caption: a contact's, or one in the
 * account's history (history-sync.ts).
 */
export async function attachmentMessage(
  media: MediaHost,
  attachment: InboundAttachment,
  text?: string,
  contextInfo?: proto.IContextInfo,
): Promise<{ message: proto.IMessage; media: InboundMedia }> {
  const plain = Buffer.from(attachment.base64, 'base64');
  if (!plain.length) throw new SimError('attachment.base64 holds no bytes', 400);
  const { fields, info } = await uploadAttachment(media, attachment.type, plain);
  const caption = attachment.caption ?? text;
  const content: Record<string, unknown> = {
    ...fields,
    mimetype: attachment.mimeType ?? DEFAULT_MIME[attachment.type],
    ...(caption && attachment.type !== 'audio' && attachment.type !== 'sticker' ? { caption } : {}),
    ...(contextInfo ? { contextInfo } : {}),
  };
  if (attachment.type === 'document') {
    content.fileName = attachment.fileName ?? 'file';
    content.title = content.fileName;
  }
  return { message: { [`${attachment.type}Message`]: content }, media: info };
}
