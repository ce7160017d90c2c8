import {
  extractMessageContent,
  normalizeMessageContent,
  proto,
  type WAMessage,
  type WAMessageKey,
} from '@whiskeysockets/baileys';
import {
  isBroadcastAddress,
  isGroupAddress,
  isLidAddress,
  isPhoneAddress,
  phoneOfJid,
  toUserJid,
  type ContactIdentity,
  type GroupChat,
} from '@mgw/contracts';
import { kindReceivedAt, parseInboundKind, type InboundKindFields } from './inbound-kinds.js';
import { usernameOfKey } from './usernames-seen.js';

export type InboundAttachmentType = 'image' | 'video' | 'audio' | 'document' | 'sticker';

/** A message a contact wrote to the linked account, as the gateway keeps it (kinds: inbound-kinds.ts). */
export interface InboundMessage extends InboundKindFields {
  platformMessageId: string;
  /** The contact's phone number (digits), when the chat tells it (absent for a LID-only chat). */
  from?: string;
  /** Who wrote: phone and/or LID as the message tells them (the device's map may add the other). */
  contact: ContactIdentity;
  text?: string;
  attachment?: { type: InboundAttachmentType; mimeType: string; fileName?: string; size: number };
  /** The WhatsApp id of the message it quotes, if any. */
  quotedPlatformMessageId?: string;
  receivedAt: Date;
  /** The message (WebMessageInfo bytes) when it carries media: what a later download needs. */
  mediaMessage?: Buffer;
  /** A group message: the group (its subject is added from the group cache); `contact` is its author. */
  chat?: GroupChat;
  /** Whom the text or caption mentions: phone numbers (digits) or LIDs (`<digits>@lid`). */
  mentions?: string[];
  /** WhatsApp's key of the message (its chat's JID, a group message's author): a read receipt names it. */
  waKey?: { remoteJid: string; participant?: string };
  /**
   * The message's `messageContextInfo.messageSecret` (32 bytes): what opens a later
   * secret-encrypted edit of it (secret-edit.ts); kept sealed with its record.
   */
  messageSecret?: Buffer;
}

/** The messageSecret an incoming message carries, when it is one (32 bytes). */
export function messageSecretOf(msg: WAMessage): { messageSecret?: Buffer } {
  const secret =
    msg.message?.messageContextInfo?.messageSecret ??
    normalizeMessageContent(msg.message)?.messageContextInfo?.messageSecret;
  return secret?.length === 32 ? { messageSecret: Buffer.from(secret) } : {};
}

/** The chat JID and author of a message's key, as a read receipt names them. */
function waKeyOf(key: WAMessageKey): { waKey?: { remoteJid: string; participant?: string } } {
  if (!key.remoteJid) return {};
  return {
    waKey: { remoteJid: key.remoteJid, ...(key.participant ? { participant: key.participant } : {}) },
  };
}

/** At most this many mentions of one message are kept (as many as /send takes). */
const MAX_MENTIONS = 100;

/** The mentions of a text or caption as phones or `<digits>@lid` (other JIDs dropped, bounded). */
function mentionsOf(context: proto.IContextInfo | undefined): { mentions?: string[] } {
  const jids = context?.mentionedJid;
  if (!jids?.length) return {};
  const mentions = [
    ...new Set(
      jids.slice(0, MAX_MENTIONS).map((jid) => {
        const who = identityOfJids(jid);
        return who.phone ?? who.lid;
      }),
    ),
  ].filter((m): m is string => m !== undefined);
  return mentions.length ? { mentions } : {};
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

/**
 * The contact of a one-to-one chat as the message names it: its phone (a phone-number JID, the
 * chat's or its alternative `sender_pn`), its LID (a LID chat's JID, or its alternative
 * `sender_lid`) and its username (the stanza's `username`). Empty for groups, broadcasts and
 * anything else.
 */
export function contactOf(key: WAMessageKey): ContactIdentity {
  return withUsername(identityOfJids(key.remoteJid, key.remoteJidAlt), key);
}

/** The writer's username, when WhatsApp named it on the message (usernames.ts). */
function withUsername(contact: ContactIdentity, key: WAMessageKey): ContactIdentity {
  const username = usernameOfKey(key);
  return username ? { ...contact, username } : contact;
}

/**
 * A contact's identity from the JIDs Baileys names it by (a JID and its alternative, e.g. a group
 * message's `participant` and `participantAlt`): the phone of a phone-number JID, the
 * `<digits>@lid` of a LID JID; other JIDs (groups, broadcasts) add nothing.
 */
export function identityOfJids(...jids: (string | null | undefined)[]): ContactIdentity {
  const out: ContactIdentity = {};
  for (const jid of jids) {
    if (isPhoneAddress(jid)) out.phone ??= phoneOfJid(jid);
    else if (isLidAddress(jid)) out.lid ??= toUserJid(jid);
  }
  return out;
}

/**
 * What we keep of an incoming message: one-to-one chats and groups (a group's with `chat` and its
 * author as `contact`; no broadcasts or our own messages), text and/or one attachment, or one of
 * the message kinds (inbound-kinds.ts); anything else (protocol messages) is skipped.
 */
export function parseInbound(msg: WAMessage, own = false): InboundMessage | undefined {
  if ((msg.key.fromMe && !own) || !msg.key.id || !msg.message) return undefined;
  // A contact's status (`status@broadcast`) or a broadcast list's message is no chat's, whatever
  // alternative JID names its author: statuses are status updates (status-updates.ts).
  if (isBroadcastAddress(msg.key.remoteJid)) return undefined;
  const group = isGroupAddress(msg.key.remoteJid) ? msg.key.remoteJid! : undefined;
  // A group message's contact is its author (none for the account's own: `own`, history sync); a
  // one-to-one chat's, the chat.
  const contact = group
    ? own
      ? {}
      : withUsername(identityOfJids(msg.key.participant, msg.key.participantAlt), msg.key)
    : contactOf(msg.key);
  // Never dropped for want of a phone: a LID-only chat (a contact hiding its number) is kept.
  if (!contact.phone && !contact.lid && !(own && group)) return undefined;
  const chat = group ? { chat: { type: 'group' as const, id: group } } : {};
  const content = extractMessageContent(msg.message);
  if (!content) return undefined;
  const kind = parseInboundKind(msg, content);
  if (kind)
    return {
      platformMessageId: msg.key.id,
      ...(contact.phone ? { from: contact.phone } : {}),
      ...kind,
      contact,
      receivedAt: kindReceivedAt(msg),
      ...chat,
      ...waKeyOf(msg.key),
    };
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
  return {
    platformMessageId: msg.key.id,
    ...(contact.phone ? { from: contact.phone } : {}),
    contact,
    ...(text !== undefined ? { text } : {}),
    ...(attachment ? { attachment } : {}),
    ...(context?.stanzaId ? { quotedPlatformMessageId: context.stanzaId } : {}),
    ...mentionsOf(context),
    receivedAt: kindReceivedAt(msg),
    ...(attachment ? { mediaMessage: Buffer.from(proto.WebMessageInfo.encode(msg).finish()) } : {}),
    ...chat,
    ...waKeyOf(msg.key),
    ...messageSecretOf(msg),
  };
}
