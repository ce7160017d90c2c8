import { randomUUID } from 'node:crypto';
import type { RedisClient } from '@mgw/common';
import { keys, type ContactIdentity } from '@mgw/contracts';
import { storageContext } from '../encryption/families.js';
import type { Sealer } from '../encryption/sealer.js';
import { storeScript } from '../lua.js';
import { CHAT_PREVIEW_CHARS, openedFields, type InboundInput, type InboundRecord } from './inbound-store.js';

/** A message of the account's history as the gateway hands it to the store (@mgw/messenger readHistory). */
export interface HistoryInput extends Omit<InboundInput, 'messageId' | 'keptMedia'> {
  /** `outbound`: the account wrote it; `contact` is then the chat's (none in a group). */
  direction: 'inbound' | 'outbound';
}

/** A message the account sent, known from its history (GET /messages/:id, a chat's messages). */
export interface HistoryOutboundRecord extends Pick<
  InboundRecord,
  'text' | 'attachment' | 'replyTo' | 'location' | 'contacts' | 'mentions' | 'chat'
> {
  messageId: string;
  deviceId: string;
  direction: 'outbound';
  status: 'sent';
  /** The chat: a phone, a `<digits>@lid`, or a group's `<id>@g.us`. */
  to: string;
  contact?: ContactIdentity;
  platformMessageId: string;
  sentAt: string;
  createdAt: string;
  history: true;
}

export interface HistoryRecordOutcome {
  recorded: number;
  /** Recorded before: live, from an earlier chunk, or sent through the gateway. */
  seen: number;
  /** Left out: the device's history bound was reached. */
  refused: number;
}

export interface HistoryBound {
  /** At most this many history messages per device within `ttlSeconds` (HISTORY_SYNC_MAX_MESSAGES). */
  maxMessages: number;
  ttlSeconds: number;
}

/** A day: a link's history arrives within minutes; the count then lapses. */
export const HISTORY_COUNT_TTL_SECONDS = 86_400;

const RECORD = storeScript<number>('message-history-record-4');

/**
 * Messages of the account's history (WhatsApp's history sync at link time, when the device asks
 * for it): each recorded once as a message record (sealed like a live one, `history: 1`) and in its
 * chat by its time, never unread, without an event and outside GET /messages' index
 * (`lua/message-history-record-4.lua`). Bounded per device (`HistoryBound`) and by the chat
 * index's own bounds; every key expires with the message retention.
 */
export class HistoryStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly sealer: Sealer,
    private readonly retentionSeconds: number,
    private readonly bound: HistoryBound,
  ) {}

  /**
   * Records the messages in the order given (newest first keeps the newest when the bound cuts; a
   * chat's last message is its newest either way).
   */
  async record(deviceId: string, messages: readonly HistoryInput[]): Promise<HistoryRecordOutcome> {
    const outcomes = await Promise.all(messages.map((m) => this.recordOne(deviceId, m)));
    return {
      recorded: outcomes.filter((o) => o === 1).length,
      seen: outcomes.filter((o) => o === 0).length,
      refused: outcomes.filter((o) => o === -1).length,
    };
  }

  private recordOne(deviceId: string, msg: HistoryInput): Promise<number> {
    const messageId = randomUUID();
    const key = keys.message(deviceId, messageId);
    const at = msg.receivedAt.toISOString();
    const phone = msg.from ?? msg.contact.phone;
    const chatId = msg.chat?.id ?? phone ?? msg.contact.lid ?? '';
    const outbound = msg.direction === 'outbound';
    const fields: Record<string, string> = {
      messageId,
      deviceId,
      direction: msg.direction,
      history: '1',
      platformMessageId: msg.platformMessageId,
      createdAt: at,
      ...(outbound
        ? { status: 'sent', to: chatId, sentAt: at }
        : {
            status: 'received',
            receivedAt: at,
            ...(phone ? { from: phone } : {}),
            ...(msg.contact.lid ? { lid: msg.contact.lid } : {}),
          }),
      ...(msg.attachment ? { attachment: JSON.stringify(msg.attachment) } : {}),
      ...(msg.waKey ? { waChat: msg.waKey.remoteJid } : {}),
      ...(msg.waKey?.participant ? { waAuthor: msg.waKey.participant } : {}),
    };
    const seal = (field: string, value: string) => this.sealer.sealText(value, storageContext(key, field));
    if (msg.chat) fields.chat = seal('chat', JSON.stringify(msg.chat));
    if (msg.text !== undefined) fields.text = seal('text', msg.text);
    // An attachment's media reference, as a live inbound one's (InboundStore.mediaMessage reads it).
    if (msg.mediaMessage) fields.media = seal('media', msg.mediaMessage.toString('base64'));
    if (msg.location || msg.contacts || msg.mentions?.length) {
      const kind = {
        ...(msg.location ? { location: msg.location } : {}),
        ...(msg.contacts ? { contacts: msg.contacts } : {}),
        ...(msg.mentions?.length ? { mentions: msg.mentions } : {}),
      };
      fields.kindBody = seal('kindBody', JSON.stringify(kind));
    }
    const chatKey = keys.chat(deviceId, chatId);
    const preview = msg.text;
    return RECORD.run(
      this.redis,
      [
        outbound
          ? keys.messageByPlatformId(deviceId, msg.platformMessageId)
          : keys.inboundByPlatformId(deviceId, msg.platformMessageId),
        key,
        keys.chatIndex(deviceId),
        keys.historyCount(deviceId),
      ],
      [
        messageId,
        String(this.retentionSeconds),
        JSON.stringify(fields),
        keys.chat(deviceId, ''),
        chatId,
        msg.chat ? 'group' : 'direct',
        String(msg.receivedAt.getTime()),
        at,
        msg.direction,
        msg.chat?.subject ? this.sealer.sealText(msg.chat.subject, storageContext(chatKey, 'subject')) : '',
        preview
          ? this.sealer.sealText(preview.slice(0, CHAT_PREVIEW_CHARS), storageContext(chatKey, 'lastPreview'))
          : '',
        String(this.bound.maxMessages),
        String(this.bound.ttlSeconds),
      ],
    );
  }
}

/**
 * A message the account sent, known from its history, from its record's fields (`MessageStore.fields`);
 * undefined for any other record.
 */
export function historyOutboundOf(
  sealer: Sealer,
  deviceId: string,
  messageId: string,
  h: Record<string, string>,
): HistoryOutboundRecord | undefined {
  if (h.history !== '1' || h.direction !== 'outbound') return undefined;
  return {
    messageId: h.messageId!,
    deviceId: h.deviceId!,
    direction: 'outbound',
    status: 'sent',
    to: h.to!,
    platformMessageId: h.platformMessageId!,
    ...openedFields(sealer, keys.message(deviceId, messageId), h),
    sentAt: h.sentAt!,
    createdAt: h.createdAt!,
    history: true,
  };
}
