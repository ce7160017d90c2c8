/**
 * History sync: what the phone sends a companion right after it links — the account's chats and
 * their recent messages as a `proto.HistorySync`, zlib-deflated, encrypted like media (HKDF info
 * "WhatsApp History Keys") and uploaded to the media host, then announced to each linked device by
 * a peer message (`protocolMessage` HISTORY_SYNC_NOTIFICATION) that only the account's own devices
 * accept. The notification carries no URL, only `directPath`: Baileys downloads the blob from
 * `https://mmg.whatsapp.net<directPath>` (a sandbox gateway routes that host to the simulator).
 *
 * Or the chunk comes **inline** (forms.ts): the same deflated bytes, not encrypted, in the
 * notification's `initialHistBootstrapInlinePayload`, with no media key and no `directPath`, as
 * WhatsApp sends small initial bootstraps; whatsmeow (`DownloadHistorySync`, message.go) and Baileys
 * (`downloadAndProcessHistorySyncNotification`, Utils/history.ts) inflate it before any download.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { deflate } from 'node:zlib';
import { encodeWAMessage, jidEncode, proto } from '@whiskeysockets/baileys';
import type { SimUser } from './directory.js';
import { attachmentMessage, type InboundAttachment } from './inbound-content.js';
import { nctSaltField, saltForHistorySync } from './first-contacts.js';
import type { HistoryForm, SimForms } from './forms.js';
import { encryptLikePhone, type MediaHost } from './media-host.js';
import { sendToOwnDevices } from './own-devices.js';
import type { SimGroups } from './groups.js';
import type { SimLogger } from './logger.js';
import type { DeliveryContext, DirectoryContext } from './sim-context.js';
import { SimError } from './sim-error.js';
import { newStanzaId } from './stanza.js';

/** What the history syncs need of the simulator. */
export interface HistorySyncContext extends DirectoryContext, DeliveryContext {
  readonly forms: SimForms;
  readonly groups: SimGroups;
  readonly logger: SimLogger;
  readonly media: MediaHost;
}

export const HISTORY_SYNC_TYPES = ['INITIAL_BOOTSTRAP', 'RECENT'] as const;
export type HistorySyncKind = (typeof HISTORY_SYNC_TYPES)[number];

export interface HistoryMessageInput {
  /** The message id; a fresh one when omitted. */
  id?: string;
  fromMe: boolean;
  /** The text, or an attachment's caption (one of the two is given). */
  text?: string;
  /** A file the message carried: uploaded to the media host as the phone did, so it downloads. */
  attachment?: InboundAttachment;
  /** Unix seconds. */
  at: number;
  /** A group message from a member: the writer's phone digits. */
  author?: string;
}

export interface HistoryConversationInput {
  /** Phone digits, `<digits>@lid` or `<id>@g.us`. */
  with: string;
  name?: string;
  unreadCount?: number;
  messages: HistoryMessageInput[];
}

export interface HistorySyncInput {
  /** @defaultValue 'INITIAL_BOOTSTRAP' */
  syncType?: HistorySyncKind;
  chunkOrder?: number;
  progress?: number;
  conversations: HistoryConversationInput[];
  /** Inline or by download; else the simulator's form (forms.ts: fixed, or random). */
  form?: HistoryForm;
  /** Leave the account's NCT salt out even when a device has not had it (a salt that comes later). */
  withoutSalt?: boolean;
}

export interface HistorySyncResult {
  /** Linked devices the notification was sent to (an offline one gets it at its next login). */
  devices: number;
  /** Size of the encrypted blob on the media host, or of the inline payload. */
  bytes: number;
  form: HistoryForm;
  /** Whether the chunk carried the account's NCT salt. */
  nctSalt: boolean;
}

const sha256 = (data: Uint8Array): Buffer => createHash('sha256').update(data).digest();
const deflateAsync = promisify(deflate);

/** The chat JID of a conversation's `with` (checked by the control API). */
function chatJidOfInput(value: string): string {
  return value.includes('@') ? value : jidEncode(value, 's.whatsapp.net');
}

/**
 * The `proto.HistorySync` the phone makes of the input: each chat's messages newest first (their
 * attachments uploaded to the media host).
 */
export async function buildHistorySync(
  sim: HistorySyncContext,
  input: HistorySyncInput,
): Promise<proto.IHistorySync> {
  return {
    syncType: proto.HistorySync.HistorySyncType[input.syncType ?? 'INITIAL_BOOTSTRAP'],
    conversations: await Promise.all(input.conversations.map((c) => conversationOf(sim, c))),
    // One chunk unless told otherwise: the first, and complete.
    chunkOrder: input.chunkOrder ?? 1,
    progress: input.progress ?? 100,
  };
}

async function conversationOf(
  sim: HistorySyncContext,
  c: HistoryConversationInput,
): Promise<proto.IConversation> {
  const id = chatJidOfInput(c.with);
  const [user, server] = id.split('@') as [string, string];
  const isGroup = server === 'g.us';
  // A known contact's chat names its other address, as the phone does (Baileys stores the pair).
  const contact = isGroup
    ? undefined
    : server === 'lid'
      ? sim.directory.getByLid(user)
      : sim.directory.get(user);
  const alt =
    contact && server === 'lid' && !contact.hidePhone
      ? { pnJid: jidEncode(contact.phone, 's.whatsapp.net') }
      : contact && server === 's.whatsapp.net'
        ? { lidJid: jidEncode(contact.lid, 'lid') }
        : {};
  const newestFirst = [...c.messages].sort((a, b) => b.at - a.at);
  return {
    id,
    ...(c.name ? { name: c.name, displayName: c.name } : {}),
    ...(c.unreadCount !== undefined ? { unreadCount: c.unreadCount } : {}),
    ...(newestFirst[0] ? { conversationTimestamp: newestFirst[0].at } : {}),
    ...alt,
    messages: await Promise.all(
      newestFirst.map(async (m) => {
        const content = await contentOf(sim.media, m);
        return {
          message: isGroup
            ? groupMessage(sim, id, m, content)
            : chatMessage(id, m, content, contact?.name || c.name),
        };
      }),
    ),
  };
}

/** What a message of the history says: its text, or its attachment (uploaded) with the text as caption. */
async function contentOf(media: MediaHost, m: HistoryMessageInput): Promise<proto.IMessage> {
  if (!m.attachment) return { conversation: m.text ?? '' };
  return (await attachmentMessage(media, m.attachment, m.text)).message;
}

/** A one-to-one message: the contact's carries its push name. */
function chatMessage(
  chat: string,
  m: HistoryMessageInput,
  message: proto.IMessage,
  pushName?: string,
): proto.IWebMessageInfo {
  return {
    key: { remoteJid: chat, fromMe: m.fromMe, id: m.id ?? newStanzaId() },
    message,
    messageTimestamp: m.at,
    ...(!m.fromMe && pushName ? { pushName } : {}),
  };
}

/**
 * A group message: a member's names its author as `participant` (by LID in a LID-addressed group
 * the simulator knows), in the key and beside it; the account's own has none.
 */
function groupMessage(
  sim: HistorySyncContext,
  chat: string,
  m: HistoryMessageInput,
  message: proto.IMessage,
): proto.IWebMessageInfo {
  const id = m.id ?? newStanzaId();
  if (m.fromMe)
    return {
      key: { remoteJid: chat, fromMe: true, id },
      message,
      messageTimestamp: m.at,
    };
  if (!m.author) throw new SimError('a group message not from the account needs its author', 400);
  const author = sim.directory.get(m.author);
  const group = sim.groups.get(chat.split('@')[0]!);
  const participant =
    group?.addressing === 'lid' && author
      ? jidEncode(author.lid, 'lid')
      : jidEncode(m.author, 's.whatsapp.net');
  return {
    key: { remoteJid: chat, fromMe: false, id, participant },
    participant,
    message,
    messageTimestamp: m.at,
    ...(author?.name ? { pushName: author.name } : {}),
  };
}

/** Encrypts like a phone encrypts media (AES-256-CBC, HMAC-SHA256 truncated to 10 bytes) and uploads. */
async function uploadHistory(
  media: MediaHost,
  plain: Buffer,
): Promise<{ fields: proto.Message.IHistorySyncNotification; bytes: number }> {
  const { mediaKey, body } = await encryptLikePhone(plain, 'md-msg-hist');
  // uploadFromPhone paths by Baileys' MEDIA_PATH_MAP, which files 'md-msg-hist' under
  // /mms/md-app-state (Baileys never uploads history; the phone and whatsmeow use
  // /mms/md-msg-hist). Only the directPath's name differs: the device fetches what it is given.
  const { directPath } = media.uploadFromPhone('md-msg-hist', body);
  return {
    fields: {
      fileSha256: sha256(plain),
      fileLength: plain.length,
      mediaKey,
      fileEncSha256: sha256(body),
      directPath,
    },
    bytes: body.length,
  };
}

/**
 * The phone sends `input` as history to each linked device of `account`: one upload, one
 * HISTORY_SYNC_NOTIFICATION peer message per device (encrypted to it like the app-state key share).
 */
export async function sendHistorySync(
  sim: HistorySyncContext,
  account: SimUser,
  input: HistorySyncInput,
): Promise<HistorySyncResult> {
  const history = await buildHistorySync(sim, input);
  // The first sync after a device links carries the account's NCT salt (field 19: first-contacts.ts).
  const salt = input.withoutSalt ? undefined : saltForHistorySync(account);
  const encoded = proto.HistorySync.encode(history).finish();
  const plain = await deflateAsync(salt ? Buffer.concat([encoded, nctSaltField(salt)]) : encoded);
  const form = sim.forms.history(input.form);
  const { fields, bytes } =
    form === 'inline'
      ? { fields: { initialHistBootstrapInlinePayload: plain }, bytes: plain.length }
      : await uploadHistory(sim.media, plain);
  const times = input.conversations.flatMap((c) => c.messages.map((m) => m.at));
  const message = encodeWAMessage({
    protocolMessage: {
      type: proto.Message.ProtocolMessage.Type.HISTORY_SYNC_NOTIFICATION,
      historySyncNotification: {
        ...fields,
        syncType: proto.Message.HistorySyncType[input.syncType ?? 'INITIAL_BOOTSTRAP'],
        chunkOrder: history.chunkOrder,
        progress: history.progress,
        ...(times.length ? { oldestMsgInChunkTimestampSec: times.reduce((a, b) => Math.min(a, b)) } : {}),
      },
    },
  });
  const sent = await sendToOwnDevices(sim, account, message);
  sim.logger.info(
    {
      phone: account.phone,
      devices: sent,
      conversations: input.conversations.length,
      bytes,
      form,
      nctSalt: !!salt,
    },
    'history sync sent',
  );
  return { devices: sent, bytes, form, nctSalt: !!salt };
}
