import {
  isLidAddress,
  type ChatMessagesQuery,
  type ChatSummary,
  type ChatsQuery,
  type MessageRecord,
} from '@mgw/contracts';
import { ContactIdentities, LabelStore, type ChatRow } from '@mgw/store';
import { messageViews } from '../devices/index.js';
import type { Uses } from '../../api-services.js';
import { recordFromFields, type AnyRecord } from '../messages/index.js';

/**
 * What the chat lists read: the chat index, the contacts' identities, the texts sent (their
 * contents) and, for a chat's messages, the records as the dashboard's message views show them.
 */
export type ChatListServices = Uses<
  'chats' | 'redis' | 'encryption' | 'contents' | 'messages' | 'inbound' | 'revisions' | 'kinds'
>;

export interface ChatsPage {
  chats: ChatSummary[];
  /** Pass as `cursor` for the next page (less recently active chats); absent on the last page. */
  nextCursor?: string;
}

export interface ChatMessagesPage {
  messages: Record<string, unknown>[];
  nextCursor?: string;
}

/** How much of a chat's last text GET /chats shows (the whole message: GET /chats/:chatId/messages). */
const PREVIEW_CHARS = 100;

/**
 * GET /chats: the device's chats, most recently active first, from its chat index (a chat enters
 * it with a message a contact wrote, or one the account sent once it is `sent`), each with its
 * unread count, its contact (a one-to-one chat: both identities the device knows) and its last
 * message in short — id, direction, time and the start of its text, kept on the chat (an inbound
 * one) or read from the request's content (an outbound one) — so a page reads no message record.
 */
export async function listChats(
  s: ChatListServices,
  deviceId: string,
  q: ChatsQuery,
  /** Given: filled with the page's rows, in the answer's order (listChatsWithState). */
  rowsOut?: ChatRow[],
): Promise<ChatsPage> {
  const cursor = q.cursor ? parseChatCursor(q.cursor) : undefined;
  const { chats, more } = await s.chats.list(deviceId, q.limit, cursor);
  rowsOut?.push(...chats);
  const direct = chats.filter((c) => c.type === 'direct');
  const [known, texts] = await Promise.all([
    new ContactIdentities(s.redis).resolveMany(
      deviceId,
      direct.map((c) => c.id),
    ),
    Promise.all(chats.map((c) => lastText(s, deviceId, c))),
  ]);
  const contacts = new Map(direct.map((c, i) => [c.id, { ...known[i] }]));
  const out = chats.map((c, i) => summary(c, contacts.get(c.id), texts[i]));
  const tail = chats[chats.length - 1];
  return {
    chats: out,
    ...(more && tail ? { nextCursor: `${tail.score}_${tail.id}` } : {}),
  };
}

/** A chat as the dashboard lists it: GET /chats's summary and the chat's app-state. */
export type ChatWithState = ChatSummary & {
  pinned: boolean;
  archived: boolean;
  /** When its mute ends (ISO), or null: not muted (a mute that ended is null). */
  mutedUntil: string | null;
  /** The ids of the business labels it carries, as the device learned them (GET /labels). */
  labels: string[];
};

/**
 * The admin API's chat list (the dashboard's Chats page): GET /chats's page with each chat's pin,
 * archive and mute (kept on the chat's record from app-state: the sender's `chat.updated`) and
 * its labels (the device's label store). The public GET /chats does not show them (docs/chats.md).
 */
export async function listChatsWithState(
  s: ChatListServices,
  deviceId: string,
  q: ChatsQuery,
): Promise<{ chats: ChatWithState[]; nextCursor?: string }> {
  const rows: ChatRow[] = [];
  const page = await listChats(s, deviceId, q, rows);
  const labels = await new LabelStore(s.redis, s.encryption).ofChats(
    deviceId,
    rows.map((r) => r.id),
  );
  const now = Date.now();
  return {
    ...page,
    chats: page.chats.map((c, i) => {
      const row = rows[i]!;
      const muted = row.mutedUntil && Date.parse(row.mutedUntil) > now ? row.mutedUntil : null;
      return {
        ...c,
        pinned: row.pinned === true,
        archived: row.archived === true,
        mutedUntil: muted,
        labels: labels.get(row.id) ?? [],
      };
    }),
  };
}

/** The start of the chat's last text: kept on the chat (inbound), or its request's content (outbound). */
async function lastText(s: ChatListServices, deviceId: string, c: ChatRow): Promise<string | undefined> {
  if (c.lastPreview !== undefined) return c.lastPreview;
  if (!c.lastContentId) return undefined;
  const shown = c.lastContent
    ? s.contents.shownFrom(deviceId, c.lastContentId, c.lastMessageId, c.lastContent)
    : await s.contents.shown(deviceId, c.lastContentId, c.lastMessageId);
  const text = shown?.text ?? shown?.attachment?.caption;
  return text?.slice(0, PREVIEW_CHARS);
}

function summary(
  c: ChatRow,
  contact: { phone?: string; lid?: string } | undefined,
  text: string | undefined,
): ChatSummary {
  const who = { ...contact };
  if (c.type === 'direct') {
    if (isLidAddress(c.id)) who.lid ??= c.id;
    else who.phone ??= c.id;
  }
  return {
    id: c.id,
    type: c.type,
    ...(c.type === 'direct' ? { contact: who } : {}),
    ...(c.subject ? { subject: c.subject } : {}),
    unreadCount: c.unreadCount,
    lastActivityAt: c.lastAt,
    lastMessage: {
      messageId: c.lastMessageId,
      direction: c.lastDirection,
      at: c.lastAt,
      ...(text !== undefined ? { text } : {}),
    },
  };
}

/** `<score>_<chatId>` of GET /chats's nextCursor. */
function parseChatCursor(cursor: string): { score: number; chatId: string } {
  const at = cursor.indexOf('_');
  return { score: Number(cursor.slice(0, at)), chatId: cursor.slice(at + 1) };
}

/**
 * GET /chats/:chatId/messages: the chat's messages, newest first, both directions, each as the
 * dashboard's message views show it (GET /messages/:id's fields, plus what an outbound text or
 * attachment said). Ids whose records expired are skipped and dropped from the chat. Undefined
 * when the device has no such chat.
 */
export async function listChatMessages(
  s: ChatListServices,
  deviceId: string,
  chatId: string,
  q: ChatMessagesQuery,
): Promise<ChatMessagesPage | undefined> {
  const before = q.cursor === undefined ? undefined : Number(q.cursor);
  // One round trip: the chat's presence, the ids, their records and what the sent ones said.
  const page = await s.chats.messagesPage(deviceId, chatId, q.limit, before);
  if (!page) return undefined;
  const read = await Promise.all(
    page.entries.map(async (e) => ({
      ...e,
      record: await recordFromFields(s, deviceId, e.messageId, e.fields),
    })),
  );
  const present = read.filter((r): r is typeof r & { record: AnyRecord } => r.record !== undefined);
  const fields = new Map(present.map((r) => [r.messageId, r.fields] as const));
  const shown = new Map(
    present.map((r) => {
      const contentId = r.fields.contentId;
      const opened =
        r.content && contentId
          ? s.contents.shownFrom(deviceId, contentId, r.messageId, r.content)
          : undefined;
      return [r.messageId, opened] as const;
    }),
  );
  const views = await messageViews(
    s,
    deviceId,
    present.map((r) => r.record) as MessageRecord[],
    fields,
    shown,
  );
  await s.chats.forget(
    deviceId,
    chatId,
    read.filter((r) => !r.record).map((r) => r.messageId),
  );
  const tail = page.entries[page.entries.length - 1];
  return {
    messages: views,
    ...(page.more && tail ? { nextCursor: String(tail.seq) } : {}),
  };
}
