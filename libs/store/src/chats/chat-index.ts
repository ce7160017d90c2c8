import type { RedisClient } from '@mgw/common';
import { keys, type ChatType } from '@mgw/contracts';
import { storageContext } from '../encryption/families.js';
import type { Sealer } from '../encryption/sealer.js';
import { storeScript } from '../lua.js';
import { SHOWN_FIELDS } from '../messages/content-store.js';

/** One chat of the index as stored (the API adds the contact and reads the last message). */
export interface ChatRow {
  id: string;
  type: ChatType;
  subject?: string;
  unreadCount: number;
  lastMessageId: string;
  lastDirection: 'inbound' | 'outbound';
  lastAt: string;
  /** The start of the last message's text when a contact wrote it (CHAT_PREVIEW_CHARS). */
  lastPreview?: string;
  /** The content the last message was sent from when the account sent it (its text is read from there). */
  lastContentId?: string;
  /** Its place in the index (last activity, ms): the cursor's first half. */
  score: number;
  /** Read with a page (`list`): the fields of `lastContentId` that `ContentStore.shownFrom` opens. */
  lastContent?: (string | null)[];
  /** The chat's app-state (archived, pinned, muted until; `setState`), when set. */
  archived?: true;
  pinned?: true;
  /**
   * When the mute ends (ISO; as kept: it may be past). A mute with no end (WhatsApp's "Always",
   * a negative end time) is the latest date there is, `MUTED_ALWAYS`.
   */
  mutedUntil?: string;
}

/** A chat's `mutedUntil` when the mute has no end: the latest time a Date holds. */
export const MUTED_ALWAYS = new Date(8.64e15).toISOString();

/** A chat's archive, pin and mute as app-state reports them: each absent when unchanged. */
export interface ChatState {
  archived?: boolean;
  pinned?: boolean;
  /** When the mute ends, or null: not muted. */
  mutedUntil?: Date | null;
}

/**
 * The page script's answer, flat: `more`, then per chat its id, score, unread count, the fields
 * `ANSWERED_FIELDS` names (in that order) and the three content fields of `SHOWN_ARGS`.
 */
type FlatReply = [number, ...(string | number | null)[]];

const PAGE = storeScript<FlatReply>('chats-page-1');

/** The content fields both page scripts read what a sent message said from (their last ARGV). */
const SHOWN_ARGS = [SHOWN_FIELDS.flag, SHOWN_FIELDS.body, SHOWN_FIELDS.varsPrefix];

/**
 * The chat hash's fields a page reads, in the order the page script reads them: the first three
 * are the ones it decides by whether to read the last message's content (ARGV 9–11), the fourth
 * its unread count (ARGV 12: answered as the chat's unread count, not among its fields).
 */
const CHAT_FIELDS = [
  'lastPreview',
  'lastMessageId',
  'lastContentId',
  'unread',
  'type',
  'subject',
  'lastDirection',
  'lastAt',
  'archived',
  'pinned',
  'mutedUntil',
] as const;

/** The chat fields a page answers after the unread count, in that order. */
const ANSWERED_FIELDS = CHAT_FIELDS.filter((name) => name !== 'unread');

/** One message of a chat's page: its place (the cursor), its record's fields, its content's. */
export interface ChatMessageEntry {
  messageId: string;
  seq: number;
  /** The record as stored (`{}` once it expired). */
  fields: Record<string, string>;
  /** The fields of the content it was sent from that `ContentStore.shownFrom` opens. */
  content?: (string | null)[];
}

const MESSAGES_PAGE = storeScript<FlatReply>('chat-messages-page-3');

/** Takes ids out of a chat's unread set (and its messages), keeping its unread count. */
const TAKE = storeScript<[number, number]>('chat-take-3');

/** Keeps a chat's archive, pin and mute on its record (only a chat the index holds). */
const STATE = storeScript<number>('chat-state-set-1');

/**
 * The device's chats (GET /chats) and each chat's messages, from what the gateway recorded: the
 * scripts that record an inbound message or announce an outbound one `sent` add it to its chat
 * (`lua/includes/chat-record.lua`), so reading a chat list never scans messages. Bounded and
 * expiring with the messages (see the include); a chat's unread inbound ids are its `:unread` set,
 * which a read takes them out of.
 */
export class ChatIndex {
  constructor(
    private readonly redis: RedisClient,
    private readonly sealer: Sealer,
  ) {}

  /**
   * Up to `limit` chats, most recently active first, after `cursor` (`<score>_<chatId>` of the
   * previous page's last chat), and whether more follow. Chats of equal activity come in reverse
   * order of their ids (Redis's order), which the cursor keeps. One round trip (the page script),
   * which also reads, for a chat whose last message the account sent, the content fields its text
   * is read from (`lastContent`, for `ContentStore.shownFrom`).
   */
  async list(
    deviceId: string,
    limit: number,
    cursor?: { score: number; chatId: string },
  ): Promise<{ chats: ChatRow[]; more: boolean }> {
    const [more, ...flat] = (await PAGE.run(
      this.redis,
      [keys.chatIndex(deviceId)],
      [
        keys.chat(deviceId, ''),
        keys.content(deviceId, ''),
        cursor ? String(cursor.score) : '+inf',
        cursor?.chatId ?? '',
        String(limit),
        ...SHOWN_ARGS,
        ...CHAT_FIELDS,
      ],
    )) as FlatReply;
    const chats: ChatRow[] = [];
    const width = 3 + ANSWERED_FIELDS.length + SHOWN_ARGS.length;
    for (let at = 0; at + width <= flat.length; at += width) {
      const h: Record<string, string> = {};
      ANSWERED_FIELDS.forEach((name, i) => {
        const value = flat[at + 3 + i];
        if (typeof value === 'string') h[name] = value;
      });
      const row = this.toRow(deviceId, String(flat[at]), Number(flat[at + 1]), Number(flat[at + 2]), h);
      if (!row) continue;
      // Read by the script when the account sent the last message (even if the content is gone).
      const read = !h.lastPreview && h.lastContentId && h.lastMessageId;
      const content = flat.slice(at + 3 + ANSWERED_FIELDS.length, at + width) as (string | null)[];
      chats.push(read ? { ...row, lastContent: content } : row);
    }
    return { chats, more: more === 1 };
  }

  /** One chat (undefined when the device has no such chat). */
  async get(deviceId: string, chatId: string): Promise<ChatRow | undefined> {
    const score = await this.redis.zscore(keys.chatIndex(deviceId), chatId);
    return score === null ? undefined : this.row(deviceId, chatId, Number(score));
  }

  private async row(deviceId: string, chatId: string, score: number): Promise<ChatRow | undefined> {
    const key = keys.chat(deviceId, chatId);
    const [h, unread] = await Promise.all([this.redis.hgetall(key), this.redis.zcard(`${key}:unread`)]);
    return this.toRow(deviceId, chatId, score, unread, h);
  }

  private toRow(
    deviceId: string,
    chatId: string,
    score: number,
    unread: number,
    h: Record<string, string>,
  ): ChatRow | undefined {
    const key = keys.chat(deviceId, chatId);
    if (!h.lastMessageId) return undefined;
    return {
      id: chatId,
      type: h.type === 'group' ? 'group' : 'direct',
      ...(h.subject ? { subject: this.sealer.openText(h.subject, storageContext(key, 'subject')) } : {}),
      unreadCount: unread,
      lastMessageId: h.lastMessageId,
      lastDirection: h.lastDirection === 'outbound' ? 'outbound' : 'inbound',
      lastAt: h.lastAt ?? new Date(score).toISOString(),
      ...(h.lastPreview
        ? { lastPreview: this.sealer.openText(h.lastPreview, storageContext(key, 'lastPreview')) }
        : {}),
      ...(h.lastContentId ? { lastContentId: h.lastContentId } : {}),
      ...(h.archived === '1' ? { archived: true as const } : {}),
      ...(h.pinned === '1' ? { pinned: true as const } : {}),
      ...(h.mutedUntil ? { mutedUntil: mutedUntilOf(Number(h.mutedUntil)) } : {}),
      score,
    };
  }

  /**
   * The chat's archive, pin and mute as app-state reported them (the sender, from the same notice
   * as `chat.updated`): kept on the chat's record while the index holds the chat; answers whether
   * it did (a chat with no message recorded is not created for its state).
   */
  async setState(deviceId: string, chatId: string, state: ChatState): Promise<boolean> {
    const flag = (v: boolean | undefined) => (v === undefined ? '' : v ? '1' : '0');
    const muted = state.mutedUntil;
    // '0' is "not muted" to the script: a mute with no end (a negative time) is kept as -1.
    const at = muted ? muted.getTime() : 0;
    const until = muted === undefined ? '' : muted === null ? '0' : String(at > 0 ? at : -1);
    const kept = await STATE.run(
      this.redis,
      [keys.chat(deviceId, chatId)],
      [flag(state.archived), flag(state.pinned), until],
    );
    return Number(kept) === 1;
  }

  /**
   * A page of the chat's messages in one round trip (the page script): up to `limit` ids older than
   * `before` (a place), newest first, each with its record's fields (`{}` once it expired) and,
   * for one the account sent from a request's content, that content's fields what it said is read
   * from (`content`, for `ContentStore.shownFrom`). Undefined when the device has no such chat
   * (as `get` answers), checked by the same script.
   */
  async messagesPage(
    deviceId: string,
    chatId: string,
    limit: number,
    before?: number,
  ): Promise<{ entries: ChatMessageEntry[]; more: boolean } | undefined> {
    const chat = keys.chat(deviceId, chatId);
    const [more, ...flat] = (await MESSAGES_PAGE.run(
      this.redis,
      [`${chat}:msgs`, keys.chatIndex(deviceId), chat],
      [
        keys.message(deviceId, ''),
        keys.content(deviceId, ''),
        before === undefined ? '+inf' : `(${before}`,
        String(limit),
        ...SHOWN_ARGS,
        chatId,
      ],
    )) as FlatReply;
    if (more === -1) return undefined;
    const entries: ChatMessageEntry[] = [];
    const width = 3 + SHOWN_ARGS.length;
    for (let at = 0; at + width <= flat.length; at += width) {
      const messageId = String(flat[at]);
      const seq = Number(flat[at + 1]);
      // The record's fields as one JSON object ('' once it expired).
      const record = String(flat[at + 2] ?? '');
      const fields = (record ? JSON.parse(record) : {}) as Record<string, string>;
      const content = flat.slice(at + 3, at + width) as (string | null)[];
      // Read by the script for a message sent from a request's content (as MessageStore.contentIdOf).
      const read = fields.direction !== 'inbound' && fields.contentId && fields.kind !== 'otp';
      entries.push({ messageId, seq, fields, ...(read ? { content } : {}) });
    }
    return { entries, more: more === 1 };
  }

  /** Drops ids whose records expired from the chat (and its unread ones). */
  async forget(deviceId: string, chatId: string, messageIds: string[]): Promise<void> {
    if (!messageIds.length) return;
    await this.take(deviceId, chatId, messageIds, true);
  }

  private take(deviceId: string, chatId: string, messageIds: string[], forgotten: boolean) {
    const key = keys.chat(deviceId, chatId);
    return TAKE.run(
      this.redis,
      [`${key}:unread`, key, `${key}:msgs`],
      [forgotten ? '1' : '0', ...messageIds],
    );
  }

  /**
   * The chat's unread inbound message ids, oldest first: all of them, or (`upTo`, a message of the
   * chat) those up to and including it.
   */
  async unread(deviceId: string, chatId: string, upTo?: string): Promise<string[]> {
    const key = keys.chat(deviceId, chatId);
    if (upTo === undefined) return this.redis.zrange(`${key}:unread`, 0, -1);
    const seq = await this.redis.zscore(`${key}:msgs`, upTo);
    if (seq === null) return [];
    return this.redis.zrangebyscore(`${key}:unread`, '-inf', seq);
  }

  /** Takes messages out of the chat's unread set; answers how many were unread and how many remain. */
  async markRead(
    deviceId: string,
    chatId: string,
    messageIds: string[],
  ): Promise<{ marked: number; unread: number }> {
    if (!messageIds.length)
      return { marked: 0, unread: await this.redis.zcard(`${keys.chat(deviceId, chatId)}:unread`) };
    const [marked, unread] = await this.take(deviceId, chatId, messageIds, false);
    return { marked: Number(marked), unread: Number(unread) };
  }
}

/** A kept mute's end: a time, or (negative) none. */
function mutedUntilOf(ms: number): string {
  return ms < 0 || !Number.isFinite(ms) || ms > 8.64e15 ? MUTED_ALWAYS : new Date(ms).toISOString();
}
