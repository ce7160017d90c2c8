import { randomUUID } from 'node:crypto';
import type { RedisClient } from '@mgw/common';
import {
  keys,
  type ContactCard,
  type ContactIdentity,
  type GroupChat,
  type LocationInput,
  type MessageReceivedEventData,
  type StoredAttachment,
  type ReadKey,
} from '@mgw/contracts';
import { storageContext } from '../encryption/families.js';
import { eventSealContext } from '../events/event-publish.js';
import { storeScript } from '../lua.js';
import type { Sealer } from '../encryption/sealer.js';
import { USAGE_TTL_SECONDS } from '../workspaces/usage.js';

/** An incoming message as the gateway hands it to the store (see @mgw/messenger parseInbound). */
export interface InboundInput {
  platformMessageId: string;
  /** The W3C traceparent of its receipt at the socket (tracing on): its event continues that trace. */
  traceparent?: string;
  /** The contact's phone (digits), when known. */
  from?: string;
  /** Who wrote (phone and/or LID). */
  contact: ContactIdentity;
  text?: string;
  attachment?: { type: string; mimeType: string; fileName?: string; size: number };
  quotedPlatformMessageId?: string;
  receivedAt: Date;
  /** The WebMessageInfo bytes when it carries media (needed to download it later). */
  mediaMessage?: Buffer;
  /**
   * A Cloud API device's attachment: its media id at Meta (what a later download asks the Graph
   * API for with the number's token; kept sealed like `mediaMessage`).
   */
  cloudMediaId?: string;
  /** Message kinds: a location, contact cards (kept sealed in `kindBody`, as outbound kinds). */
  location?: LocationInput;
  contacts?: ContactCard[];
  /** A group message: its group (kept sealed: the subject is the group's own text); `contact` is its author. */
  chat?: GroupChat;
  /** Whom the text or caption mentions (kept sealed in `kindBody`). */
  mentions?: string[];
  /** Its id, when chosen before (its attachment was kept in the media store under it). */
  messageId?: string;
  /** The attachment kept in the media store on arrival (or why not): docs/media.md. */
  keptMedia?: StoredAttachment;
  /** WhatsApp's key of the message (its chat's JID and a group message's author): a read receipt names it. */
  waKey?: { remoteJid: string; participant?: string };
  /** The message's messageSecret: kept sealed (`msgSecret`) to open a secret-encrypted edit of it. */
  messageSecret?: Buffer;
}

/** An incoming message as GET /messages/:id shows it. */
export interface InboundRecord {
  messageId: string;
  deviceId: string;
  direction: 'inbound';
  status: 'received';
  /** Absent when the contact is known only by its LID (see `contact`). */
  from?: string;
  contact: ContactIdentity;
  platformMessageId: string;
  text?: string;
  attachment?: {
    type: string;
    mimeType: string;
    fileName?: string;
    size: number;
    mediaId?: string;
    mediaError?: string;
    url?: string;
    urlExpiresAt?: string;
  };
  replyTo?: string;
  location?: LocationInput;
  contacts?: ContactCard[];
  receivedAt: string;
  createdAt: string;
  chat?: GroupChat;
  mentions?: string[];
  /** A message of the account's history (history sync), recorded from the phone's copy. */
  history?: true;
}

/**
 * Records the message once (WhatsApp redelivers after a reconnect), lists it in the device's
 * message index and in its chat (GET /chats) and emits `message.received` with it
 * (`lua/message-inbound-record-8.lua`).
 */
const RECORD = storeScript<number>('message-inbound-record-8');

/** How much of an inbound text its chat keeps as the preview of its last message (GET /chats). */
export const CHAT_PREVIEW_CHARS = 100;

/**
 * Messages contacts wrote to the linked account: a record under `keys.message` (direction
 * `inbound`, message retention) whose text and media reference are sealed, and a
 * `message.received` event whose data (it holds the text) is sealed until it is delivered.
 */
export class InboundStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly sealer: Sealer,
    private readonly retentionSeconds: number,
  ) {}

  /** Records the message and emits its event; undefined when it was recorded before. */
  async record(deviceId: string, msg: InboundInput): Promise<string | undefined> {
    const messageId = msg.messageId ?? randomUUID();
    const key = keys.message(deviceId, messageId);
    // The record names the kept object (its URL is signed anew on each read); the event has a URL.
    const kept = msg.keptMedia;
    const attachment = msg.attachment && {
      ...msg.attachment,
      ...(kept?.mediaId ? { mediaId: kept.mediaId } : {}),
      ...(kept?.mediaError ? { mediaError: kept.mediaError } : {}),
    };
    const replyTo = msg.quotedPlatformMessageId
      ? ((await this.redis.get(keys.messageByPlatformId(deviceId, msg.quotedPlatformMessageId))) ?? undefined)
      : undefined;
    const receivedAt = msg.receivedAt.toISOString();
    const phone = msg.from ?? msg.contact.phone;
    const contact: ContactIdentity = { ...msg.contact, ...(phone ? { phone } : {}) };
    const fields: Record<string, string> = {
      messageId,
      deviceId,
      direction: 'inbound',
      status: 'received',
      ...(phone ? { from: phone } : {}),
      ...(contact.lid ? { lid: contact.lid } : {}),
      ...(contact.username ? { username: contact.username } : {}),
      platformMessageId: msg.platformMessageId,
      receivedAt,
      createdAt: receivedAt,
      ...(attachment ? { attachment: JSON.stringify(attachment) } : {}),
      ...(replyTo ? { replyTo } : {}),
      ...(msg.waKey ? { waChat: msg.waKey.remoteJid } : {}),
      ...(msg.waKey?.participant ? { waAuthor: msg.waKey.participant } : {}),
      ...(msg.traceparent ? { tp: msg.traceparent } : {}),
    };
    if (msg.chat) fields.chat = this.sealer.sealText(JSON.stringify(msg.chat), storageContext(key, 'chat'));
    if (msg.text !== undefined) fields.text = this.sealer.sealText(msg.text, storageContext(key, 'text'));
    const kind = {
      ...(msg.location ? { location: msg.location } : {}),
      ...(msg.contacts ? { contacts: msg.contacts } : {}),
      ...(msg.mentions?.length ? { mentions: msg.mentions } : {}),
    };
    if (msg.location || msg.contacts || msg.mentions?.length)
      fields.kindBody = this.sealer.sealText(JSON.stringify(kind), storageContext(key, 'kindBody'));
    if (msg.messageSecret)
      fields.msgSecret = this.sealer.sealText(
        msg.messageSecret.toString('base64'),
        storageContext(key, 'msgSecret'),
      );
    if (msg.mediaMessage)
      fields.media = this.sealer.sealText(msg.mediaMessage.toString('base64'), storageContext(key, 'media'));
    if (msg.cloudMediaId)
      fields.cloudMedia = this.sealer.sealText(msg.cloudMediaId, storageContext(key, 'cloudMedia'));
    // The chat it belongs to: the group, else the contact (by phone when known, as /send names it).
    const chatId = msg.chat?.id ?? phone ?? contact.lid ?? '';
    const eventId = randomUUID();
    const data: MessageReceivedEventData = {
      deviceId,
      messageId,
      platformMessageId: msg.platformMessageId,
      ...(phone ? { from: phone } : {}),
      contact,
      ...(msg.text !== undefined ? { text: msg.text } : {}),
      ...(attachment
        ? {
            attachment: {
              ...attachment,
              ...(kept?.url ? { url: kept.url, urlExpiresAt: kept.urlExpiresAt } : {}),
            },
          }
        : {}),
      ...(replyTo ? { replyTo } : {}),
      ...kind,
      ...(msg.chat ? { chat: msg.chat } : {}),
      receivedAt,
    };
    const written = await RECORD.run(
      this.redis,
      [
        keys.inboundByPlatformId(deviceId, msg.platformMessageId),
        key,
        keys.webhook(deviceId),
        keys.eventOutbox(deviceId),
        keys.messageIndex(deviceId),
        keys.messageSeq(deviceId),
        keys.eventLog(deviceId),
        keys.chatIndex(deviceId),
      ],
      [
        messageId,
        String(this.retentionSeconds),
        JSON.stringify(fields),
        keys.eventsChannel(),
        deviceId,
        eventId,
        receivedAt,
        this.sealer.sealText(JSON.stringify(data), eventSealContext(deviceId, eventId)),
        keys.chat(deviceId, ''),
        chatId,
        msg.chat ? 'group' : 'direct',
        String(msg.receivedAt.getTime()),
        msg.chat?.subject
          ? this.sealer.sealText(msg.chat.subject, storageContext(keys.chat(deviceId, chatId), 'subject'))
          : '',
        msg.text
          ? this.sealer.sealText(
              msg.text.slice(0, CHAT_PREVIEW_CHARS),
              storageContext(keys.chat(deviceId, chatId), 'lastPreview'),
            )
          : '',
        msg.traceparent ?? '',
        keys.deviceDayUsage(deviceId, receivedAt),
        String(USAGE_TTL_SECONDS),
      ],
    );
    return written === 1 ? messageId : undefined;
  }

  /** The message as the API shows it (text opened); undefined when it is not an inbound message. */
  async get(deviceId: string, messageId: string): Promise<InboundRecord | undefined> {
    return this.fromFields(deviceId, messageId, await this.redis.hgetall(keys.message(deviceId, messageId)));
  }

  /** What `get` answers, from the record's fields (`MessageStore.fields`: read once for either direction). */
  fromFields(deviceId: string, messageId: string, h: Record<string, string>): InboundRecord | undefined {
    if (h.direction !== 'inbound') return undefined;
    return {
      messageId: h.messageId!,
      deviceId: h.deviceId!,
      direction: 'inbound',
      status: 'received',
      ...(h.from ? { from: h.from } : {}),
      contact: {
        ...(h.from ? { phone: h.from } : {}),
        ...(h.lid ? { lid: h.lid } : {}),
        ...(h.username ? { username: h.username } : {}),
      },
      platformMessageId: h.platformMessageId!,
      ...openedFields(this.sealer, keys.message(deviceId, messageId), h),
      receivedAt: h.receivedAt!,
      createdAt: h.createdAt!,
    };
  }

  /**
   * What a read receipt of the message needs: WhatsApp's key of it and the chat it is in (GET
   * /chats); undefined when it is not an inbound message of the device.
   */
  async readTarget(
    deviceId: string,
    messageId: string,
  ): Promise<{ chatId: string; key: ReadKey } | undefined> {
    const [direction, platformMessageId, from, lid, chat, waChat, waAuthor] = await this.redis.hmget(
      keys.message(deviceId, messageId),
      'direction',
      'platformMessageId',
      'from',
      'lid',
      'chat',
      'waChat',
      'waAuthor',
    );
    if (direction !== 'inbound') return undefined;
    return this.whatsAppKey(deviceId, messageId, { platformMessageId, from, lid, chat, waChat, waAuthor });
  }

  /**
   * What a reply quoting the message needs (`existingMessageId` naming a message a contact sent),
   * from its record's fields (`MessageStore.fields`: read once for either direction): WhatsApp's
   * key of it, and what it said as the quote shows it — its text, and for an attachment the
   * message as it arrived (its media reference, `mediaMessage`). Undefined when it is not an
   * inbound message of the device (or it expired).
   */
  quoteFromFields(
    deviceId: string,
    messageId: string,
    h: Record<string, string>,
  ): { key: ReadKey; text?: string; mediaMessage?: Buffer } | undefined {
    if (h.direction !== 'inbound') return undefined;
    const target = this.whatsAppKey(deviceId, messageId, h);
    if (!target) return undefined;
    const key = keys.message(deviceId, messageId);
    return {
      key: target.key,
      ...(h.text !== undefined ? { text: this.sealer.openText(h.text, storageContext(key, 'text')) } : {}),
      ...(h.media ? { mediaMessage: this.openMedia(key, h.media) } : {}),
    };
  }

  /** An inbound record's WhatsApp key and chat, from its fields (readTarget, quoteTarget). */
  private whatsAppKey(
    deviceId: string,
    messageId: string,
    h: Record<string, string | null | undefined>,
  ): { chatId: string; key: ReadKey } | undefined {
    const { platformMessageId, from, lid, chat, waChat, waAuthor } = h;
    if (!platformMessageId) return undefined;
    const group = chat
      ? (JSON.parse(
          this.sealer.openText(chat, storageContext(keys.message(deviceId, messageId), 'chat')),
        ) as GroupChat)
      : undefined;
    const chatId = group?.id ?? from ?? lid;
    if (!chatId) return undefined;
    // Recorded before WhatsApp's key was kept: the chat's JID from what the record tells.
    const remoteJid =
      waChat ?? (group ? group.id : from ? `${from}@s.whatsapp.net` : `${lid!.slice(0, -4)}@lid`);
    const participant = waAuthor ?? (group && from ? `${from}@s.whatsapp.net` : undefined);
    return { chatId, key: { remoteJid, id: platformMessageId, ...(participant ? { participant } : {}) } };
  }

  /**
   * The media id at Meta of a Cloud API device's inbound attachment, from its record's fields
   * (`MessageStore.fields`); undefined for any other message.
   */
  cloudMediaIdFromFields(deviceId: string, messageId: string, h: Record<string, string>): string | undefined {
    if (h.direction !== 'inbound' || !h.cloudMedia) return undefined;
    return this.sealer.openText(
      h.cloudMedia,
      storageContext(keys.message(deviceId, messageId), 'cloudMedia'),
    );
  }

  /** The sealed media reference of an inbound message with an attachment (for a download). */
  async mediaMessage(deviceId: string, messageId: string): Promise<Buffer | undefined> {
    const key = keys.message(deviceId, messageId);
    const media = await this.redis.hget(key, 'media');
    return media ? this.openMedia(key, media) : undefined;
  }

  /** A record's sealed media reference (`media`), opened. */
  private openMedia(key: string, sealed: string): Buffer {
    return Buffer.from(this.sealer.openText(sealed, storageContext(key, 'media')), 'base64');
  }
}

/**
 * What a message record keeps of what the message said, opened: its text, attachment, the message
 * it replies to, its kind fields, its group, and `history: true` for a message of the account's
 * history (history-store.ts). Shared by both directions' readers.
 */
export function openedFields(
  sealer: Sealer,
  key: string,
  h: Record<string, string>,
): Pick<
  InboundRecord,
  'text' | 'attachment' | 'replyTo' | 'location' | 'contacts' | 'mentions' | 'chat' | 'history'
> {
  return {
    ...(h.text !== undefined ? { text: sealer.openText(h.text, storageContext(key, 'text')) } : {}),
    ...(h.attachment ? { attachment: JSON.parse(h.attachment) as InboundRecord['attachment'] } : {}),
    ...(h.replyTo ? { replyTo: h.replyTo } : {}),
    ...(h.kindBody
      ? (JSON.parse(sealer.openText(h.kindBody, storageContext(key, 'kindBody'))) as Pick<
          InboundRecord,
          'location' | 'contacts' | 'mentions'
        >)
      : {}),
    ...(h.chat
      ? { chat: JSON.parse(sealer.openText(h.chat, storageContext(key, 'chat'))) as GroupChat }
      : {}),
    ...(h.history === '1' ? { history: true as const } : {}),
  };
}
