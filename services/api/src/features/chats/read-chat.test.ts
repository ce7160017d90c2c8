import { expect } from 'chai';
import {
  createMetrics,
  type DeviceCommandReply,
  type MarkReadCommand,
  type MessageRecord,
  type ReadKey,
} from '@mgw/contracts';
import type { ChatRow } from '@mgw/store';
import { MemoryHolder } from '../test-support.js';
import { READ_RECEIPTS_WAIT_SECONDS, markRead, type ReadDeps } from './mark-read.js';
import { readChat } from './read-chat.js';
import { readMessage } from './read-message.js';

/**
 * A device's chats as marking read sees them, in memory: each received message's chat, its place
 * in the chat and its WhatsApp key (the inbound store's read target), the chat's unread set (the
 * chat index), and the records (a message the account sent too).
 */
class MemoryInbox {
  private seq = 0;
  readonly received = new Map<string, { deviceId: string; chatId: string; seq: number; key: ReadKey }>();
  readonly unreadOf = new Map<string, Set<string>>();
  readonly records = new Map<string, MessageRecord>();

  /** A message a contact wrote (its WhatsApp id is what its receipt names). */
  receive(deviceId: string, from: string): { id: string; waId: string } {
    const n = ++this.seq;
    const id = `in-${n}`;
    const waId = `WA${n}`;
    this.received.set(id, {
      deviceId,
      chatId: from,
      seq: n,
      key: { remoteJid: `${from}@s.whatsapp.net`, id: waId },
    });
    this.unread(deviceId, from).add(id);
    this.records.set(id, {
      messageId: id,
      deviceId,
      direction: 'inbound',
      status: 'received',
    } as unknown as MessageRecord);
    return { id, waId };
  }

  private unread(deviceId: string, chatId: string): Set<string> {
    const key = `${deviceId}\n${chatId}`;
    if (!this.unreadOf.has(key)) this.unreadOf.set(key, new Set());
    return this.unreadOf.get(key)!;
  }

  readonly chats: ReadDeps['chats'] = {
    get: async (deviceId, chatId) =>
      this.unreadOf.has(`${deviceId}\n${chatId}`) ? ({ id: chatId, type: 'direct' } as ChatRow) : undefined,
    unread: async (deviceId, chatId, upTo) => {
      const ids = [...this.unread(deviceId, chatId)].sort(
        (a, b) => this.received.get(a)!.seq - this.received.get(b)!.seq,
      );
      if (upTo === undefined) return ids;
      const at = this.received.get(upTo);
      return at ? ids.filter((id) => this.received.get(id)!.seq <= at.seq) : [];
    },
    markRead: async (deviceId, chatId, ids) => {
      const set = this.unread(deviceId, chatId);
      const marked = ids.filter((id) => set.delete(id)).length;
      return { marked, unread: set.size };
    },
  };
  readonly inbound: ReadDeps['inbound'] = {
    readTarget: async (deviceId, id) => {
      const m = this.received.get(id);
      return m && m.deviceId === deviceId ? { chatId: m.chatId, key: m.key } : undefined;
    },
  };
  readonly messages = {
    get: async (deviceId: string, id: string) => {
      const r = this.records.get(id);
      return r && r.deviceId === deviceId ? r : undefined;
    },
  };
}

/** Marking read without an API: the chats in memory, and an in-memory holder answering mark-read as read-command.ts does. */
describe('readChat, readMessage, markRead: read receipts through the holder, then the unread set (an in-memory holder)', () => {
  let mh: MemoryHolder;
  let inbox: MemoryInbox;
  let deps: ReadDeps & { messages: MemoryInbox['messages'] };
  const deviceId = 'rc-1';

  beforeEach(() => {
    mh = new MemoryHolder();
    inbox = new MemoryInbox();
    deps = {
      chats: inbox.chats,
      inbound: inbox.inbound,
      messages: inbox.messages,
      metrics: createMetrics(),
      holder: mh.holder,
    };
    mh.connect(deviceId);
  });

  /** A holder sending the receipts; `receiptsShown` as the account's privacy says. */
  const receipts = (receiptsShown?: boolean) => (): DeviceCommandReply =>
    receiptsShown === undefined ? { ok: true } : { ok: true, data: { receiptsShown } };
  const shownCount = async () =>
    Object.fromEntries(
      (await deps.metrics.readReceipts.get()).values.map((v) => [
        `${v.labels.how}/${v.labels.shown}`,
        v.value,
      ]),
    );

  it("When a chat is read, then the holder is asked for exactly its unread messages' keys (with the receipts' wait), they leave the unread set, and the privacy it reports is the answer", async () => {
    const a = inbox.receive(deviceId, '15552000021');
    const b = inbox.receive(deviceId, '15552000021');
    const heard = mh.fakeSender(deviceId, receipts(false)) as MarkReadCommand[];

    expect(await readChat(deps, deviceId, '15552000021')).to.deep.equal({
      ok: true,
      data: { chatId: '15552000021', marked: 2, receiptsShown: false, unreadCount: 0 },
    });
    expect(heard.map((c) => c.keys)).to.deep.equal([
      [
        { remoteJid: '15552000021@s.whatsapp.net', id: a.waId },
        { remoteJid: '15552000021@s.whatsapp.net', id: b.waId },
      ],
    ]);
    expect(mh.asked[0]!.waitSeconds).to.equal(READ_RECEIPTS_WAIT_SECONDS);
    expect(await deps.chats.unread(deviceId, '15552000021')).to.deep.equal([]);
    expect(await shownCount()).to.deep.equal({ 'request/self': 2 });

    // Nothing unread now: nothing to send, nothing asked.
    expect(await readChat(deps, deviceId, '15552000021')).to.deep.equal({
      ok: true,
      data: { chatId: '15552000021', marked: 0, receiptsShown: true, unreadCount: 0 },
    });
    expect(heard).to.have.length(1);
  });

  it('When the holder answers ok without saying whether receipts were shown, then they count as shown', async () => {
    inbox.receive(deviceId, '15552000031');
    mh.fakeSender(deviceId, receipts(undefined));
    expect(await readChat(deps, deviceId, '15552000031')).to.deep.equal({
      ok: true,
      data: { chatId: '15552000031', marked: 1, receiptsShown: true, unreadCount: 0 },
    });
    expect(await shownCount()).to.deep.equal({ 'request/shown': 1 });
  });

  it('When keys of messages read already are given to markRead, then their receipts go too and only the unread ones are marked', async () => {
    const a = inbox.receive(deviceId, '15552000035');
    const heard = mh.fakeSender(deviceId, receipts(true)) as MarkReadCommand[];
    const extra = { remoteJid: '15552000035@s.whatsapp.net', id: 'WA-OLD' };
    expect(await markRead(deps, deviceId, '15552000035', [a.id], [extra])).to.deep.equal({
      ok: true,
      data: { marked: 1, receiptsShown: true, unreadCount: 0 },
    });
    expect(heard[0]!.keys).to.deep.equal([{ remoteJid: '15552000035@s.whatsapp.net', id: a.waId }, extra]);
  });

  it('When the device has no such chat, then unknown_chat and the holder is not asked', async () => {
    const heard = mh.fakeSender(deviceId, receipts(true));
    expect(await readChat(deps, deviceId, '15552000099')).to.deep.equal({
      ok: false,
      reason: 'unknown_chat',
    });
    expect(heard).to.deep.equal([]);
  });

  it("When the receipts do not go (the holder fails, times out, or the device is not connected), then the holder's outcome, and nothing is marked", async () => {
    const { id } = inbox.receive(deviceId, '15552000041');
    const answers: (DeviceCommandReply | undefined)[] = [
      { ok: false, error: 'send failed' },
      { ok: false, error: 'send failed' },
      undefined,
    ];
    mh.fakeSender(deviceId, () => answers.shift());

    expect(await readChat(deps, deviceId, '15552000041')).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'send failed',
    });
    expect(await readMessage(deps, deviceId, id)).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'send failed',
    });
    expect(await readChat(deps, deviceId, '15552000041')).to.deep.equal({ ok: false, reason: 'timeout' });
    mh.sessions.update(deviceId, 'connecting');
    expect(await readChat(deps, deviceId, '15552000041')).to.deep.equal({ ok: false, reason: 'no_device' });
    expect(await deps.chats.unread(deviceId, '15552000041')).to.deep.equal([id]);
    expect(await shownCount()).to.deep.equal({});
  });

  it('When a message is read, then the unread ones before it in its chat are read with it; read again, its receipt goes again and nothing more is marked', async () => {
    const first = inbox.receive(deviceId, '15552000051');
    const second = inbox.receive(deviceId, '15552000051');
    const third = inbox.receive(deviceId, '15552000051');
    const heard = mh.fakeSender(deviceId, receipts(true)) as MarkReadCommand[];

    expect(await readMessage(deps, deviceId, second.id)).to.deep.equal({
      ok: true,
      data: { messageId: second.id, chatId: '15552000051', marked: 2, receiptsShown: true, unreadCount: 1 },
    });
    expect(heard[0]!.keys.map((k) => k.id)).to.deep.equal([first.waId, second.waId]);
    expect(await deps.chats.unread(deviceId, '15552000051')).to.deep.equal([third.id]);

    expect(await readMessage(deps, deviceId, first.id)).to.deep.equal({
      ok: true,
      data: { messageId: first.id, chatId: '15552000051', marked: 0, receiptsShown: true, unreadCount: 1 },
    });
    expect(heard[1]!.keys.map((k) => k.id)).to.deep.equal([first.waId]);
  });

  it("When the message is unknown, another device's, or one the account sent, then unknown_message or not_inbound and the holder is not asked", async () => {
    const { id } = inbox.receive(deviceId, '15552000061');
    inbox.records.set('out-1', {
      messageId: 'out-1',
      deviceId,
      to: '15552000061',
      status: 'sent',
    } as MessageRecord);
    const heard = mh.fakeSender(deviceId, receipts(true));

    expect(await readMessage(deps, 'rc-other', id), "another device's").to.deep.equal({
      ok: false,
      reason: 'unknown_message',
    });
    expect(await readMessage(deps, deviceId, 'no-such-id')).to.deep.equal({
      ok: false,
      reason: 'unknown_message',
    });
    expect(await readMessage(deps, deviceId, 'x'.repeat(129)), 'too long to be an id').to.deep.equal({
      ok: false,
      reason: 'unknown_message',
    });
    expect(await readMessage(deps, deviceId, 'out-1')).to.deep.equal({ ok: false, reason: 'not_inbound' });
    expect(heard).to.deep.equal([]);
  });
});
