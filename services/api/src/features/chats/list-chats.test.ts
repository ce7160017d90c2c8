import { expect } from 'chai';
import { keys, type ChatMessagesQuery, type ChatsQuery } from '@mgw/contracts';
import type { ChatRow, ShownContent } from '@mgw/store';
import { MemoryRedis, MemoryRecords, inboundRecord, sentRecord } from '../test-support.js';
import { listChatMessages, listChats, listChatsWithState, type ChatListServices } from './list-chats.js';

/**
 * The chat lists without an API: the chat index's pages as told, the device's phone <-> LID map and
 * labels in an in-memory Redis (as the sender keeps them), the texts sent as the content store
 * opens them, the records in memory.
 */
describe('Chats: listChats, listChatsWithState, listChatMessages (in-memory index, Redis and records)', () => {
  const deviceId = 'lc-1';
  const lid = '998877665544@lid';
  let redis: MemoryRedis;
  let records: MemoryRecords;
  let rows: ChatRow[];
  let forgotten: string[];
  let s: ChatListServices;

  const row = (id: string, more: Partial<ChatRow> = {}): ChatRow => ({
    id,
    type: id.endsWith('@g.us') ? 'group' : 'direct',
    unreadCount: 0,
    lastMessageId: `m-${id}`,
    lastDirection: 'inbound',
    lastAt: '2026-01-01T10:00:00.000Z',
    score: 1000,
    ...more,
  });

  beforeEach(() => {
    redis = new MemoryRedis();
    redis.hash(keys.contactIdentities(deviceId), {
      'p:15550001111': '998877665544',
      'l:998877665544': '15550001111',
    });
    records = new MemoryRecords();
    rows = [];
    forgotten = [];
    const shown = (text: string): ShownContent => ({ text }) as ShownContent;
    s = {
      redis: redis.client,
      encryption: records.encryption,
      messages: records.messages,
      inbound: records.inbound,
      revisions: { view: async () => ({}) },
      kinds: { read: async () => ({}), revisionOf: () => undefined },
      chats: {
        list: async (_d: string, limit: number, cursor?: { score: number; chatId: string }) => {
          const after = cursor ? rows.findIndex((r) => r.id === cursor.chatId) + 1 : 0;
          return { chats: rows.slice(after, after + limit), more: rows.length > after + limit };
        },
        messagesPage: async (d: string, chatId: string, limit: number, before?: number) => {
          if (!rows.some((r) => r.id === chatId)) return undefined;
          const entries = pageOf(d, chatId).filter((e) => before === undefined || e.seq < before);
          return { entries: entries.slice(0, limit), more: entries.length > limit };
        },
        forget: async (_d: string, _c: string, ids: string[]) => void forgotten.push(...ids),
      },
      contents: {
        shownFrom: (_d: string, _c: string, _m: string, fields: (string | null | undefined)[]) =>
          shown(String(fields[0])),
        shown: async (_d: string, contentId: string) => shown(`read from ${contentId}`),
      },
    } as unknown as ChatListServices;
  });

  /** A chat's messages, newest first: the ids the test put in `chatMessages`, with their records' fields. */
  let chatMessages: string[] = [];
  const pageOf = (d: string, _chatId: string) =>
    chatMessages.map((messageId, i) => ({
      messageId,
      seq: chatMessages.length - i,
      fields: records.fieldsOf(d, messageId),
    }));
  const q = (more: Partial<ChatsQuery> = {}) => ({ limit: 20, ...more }) as ChatsQuery;

  it("When the chats are listed, then each with its contact (both identities the device knows), unread count and last message's start; paged by cursor", async () => {
    rows.push(
      row('15550001111', { unreadCount: 2, lastPreview: 'Hello there' }),
      row('120363000000000001@g.us', {
        subject: 'Team',
        score: 900,
        lastDirection: 'outbound',
        lastContentId: 'c-1',
      }),
      row(lid, { score: 800, lastContentId: 'c-2', lastContent: ['a'.repeat(150)] }),
    );
    const first = await listChats(s, deviceId, q({ limit: 2 }));
    expect(first.chats).to.deep.equal([
      {
        id: '15550001111',
        type: 'direct',
        contact: { phone: '15550001111', lid },
        unreadCount: 2,
        lastActivityAt: '2026-01-01T10:00:00.000Z',
        lastMessage: {
          messageId: 'm-15550001111',
          direction: 'inbound',
          at: '2026-01-01T10:00:00.000Z',
          text: 'Hello there',
        },
      },
      {
        id: '120363000000000001@g.us',
        type: 'group',
        subject: 'Team',
        unreadCount: 0,
        lastActivityAt: '2026-01-01T10:00:00.000Z',
        lastMessage: {
          messageId: 'm-120363000000000001@g.us',
          direction: 'outbound',
          at: '2026-01-01T10:00:00.000Z',
          text: 'read from c-1',
        },
      },
    ]);
    expect(first.nextCursor).to.equal('900_120363000000000001@g.us');
    const second = await listChats(s, deviceId, q({ cursor: first.nextCursor }));
    expect(second.chats.map((c) => [c.id, c.contact, c.lastMessage.text])).to.deep.equal([
      [lid, { phone: '15550001111', lid }, 'a'.repeat(100)],
    ]);
    expect(second.nextCursor).to.equal(undefined);
  });

  it('When the chats are listed with their state, then each shows its pin, archive, a mute still running, and its labels', async () => {
    const later = new Date(Date.now() + 3600_000).toISOString();
    rows.push(
      row('15550001111', { pinned: true, mutedUntil: later }),
      row('15550002222', { archived: true, mutedUntil: '2020-01-01T00:00:00.000Z' }),
    );
    redis.hash(keys.labels(deviceId), { '5': 'sealed', '7': 'sealed' });
    redis.zset(keys.labelChats(deviceId, '5'), { '15550001111': 1, '15550002222': 1 });
    redis.zset(keys.labelChats(deviceId, '7'), { '15550002222': 1 });
    const { chats } = await listChatsWithState(s, deviceId, q());
    expect(chats.map((c) => [c.id, c.pinned, c.archived, c.mutedUntil, c.labels])).to.deep.equal([
      ['15550001111', true, false, later, ['5']],
      ['15550002222', false, true, null, ['5', '7']],
    ]);
  });

  it("When a chat's messages are listed, then both directions newest first as the message views show them; ids whose records are gone are skipped and dropped; no such chat is undefined", async () => {
    rows.push(row('15550001111'));
    const sent = sentRecord(deviceId);
    const received = inboundRecord(deviceId, { text: 'hi' });
    records.put(sent);
    records.put(received);
    chatMessages = [received.messageId, 'gone-1', sent.messageId];
    const page = await listChatMessages(s, deviceId, '15550001111', { limit: 2 } as ChatMessagesQuery);
    expect(page!.messages.map((m) => [m.messageId, m.direction])).to.deep.equal([
      [received.messageId, 'inbound'],
    ]);
    expect(page!.nextCursor).to.equal('2');
    expect(forgotten).to.deep.equal(['gone-1']);
    const older = await listChatMessages(s, deviceId, '15550001111', {
      limit: 2,
      cursor: '2',
    } as ChatMessagesQuery);
    expect(older!.messages.map((m) => m.messageId)).to.deep.equal([sent.messageId]);
    expect(await listChatMessages(s, deviceId, '15559999999', { limit: 2 } as ChatMessagesQuery)).to.equal(
      undefined,
    );
  });
});
