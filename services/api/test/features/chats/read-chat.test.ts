import { expect } from 'chai';
import {
  createMetrics,
  newMessageId,
  newPlatformMessageId,
  type DeviceCommandReply,
  type MarkReadCommand,
} from '@mgw/contracts';
import { ChatIndex, Encryption, InboundStore, MessageStore } from '@mgw/store';
import type { ReadDeps } from '../../../src/features/chats/mark-read.js';
import { readChat } from '../../../src/features/chats/read-chat.js';
import { readMessage } from '../../../src/features/chats/read-message.js';
import { HolderFixture } from '../../helpers/fake-holder.js';

/**
 * Marking read without an API: messages recorded in the run's Redis as the sender records them,
 * the chat index they land in, and a fake sender answering mark-read as read-command.ts does.
 */
describe('readChat, readMessage: read receipts through the holder, then the unread set (real Redis, a fake sender)', () => {
  const fx = new HolderFixture('read-chat-test');
  let deps: ReadDeps & { messages: MessageStore };
  let deviceId: string;

  beforeEach(async () => {
    fx.setUp();
    const encryption = Encryption.fromEnv();
    deps = {
      chats: new ChatIndex(fx.redis, encryption),
      inbound: new InboundStore(fx.redis, encryption, 3600),
      messages: new MessageStore(fx.redis, 3600),
      metrics: createMetrics(),
      holder: fx.holder,
    };
    deviceId = fx.freshDevice('rc');
    await fx.connect(deviceId);
  });
  afterEach(() => fx.tearDown());

  /** A message a contact wrote, and its WhatsApp id (what its read receipt names). */
  async function receive(from: string, text: string, at: number): Promise<{ id: string; waId: string }> {
    const waId = newPlatformMessageId();
    const id = (await deps.inbound.record(deviceId, {
      platformMessageId: waId,
      from,
      contact: { phone: from },
      text,
      receivedAt: new Date(at),
      waKey: { remoteJid: `${from}@s.whatsapp.net` },
    }))!;
    return { id, waId };
  }
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

  it("When a chat is read, then the holder is asked for exactly its unread messages' keys, they leave the unread set, and the privacy it reports is the answer", async () => {
    const t0 = Date.now() - 10_000;
    const a = await receive('15552000021', 'one', t0);
    const b = await receive('15552000021', 'two', t0 + 1);
    const heard = await fx.fakeSender(deviceId, receipts(false));

    expect(await readChat(deps, deviceId, '15552000021')).to.deep.equal({
      ok: true,
      data: { chatId: '15552000021', marked: 2, receiptsShown: false, unreadCount: 0 },
    });
    expect((heard as MarkReadCommand[]).map((c) => c.keys)).to.deep.equal([
      [
        { remoteJid: '15552000021@s.whatsapp.net', id: a.waId },
        { remoteJid: '15552000021@s.whatsapp.net', id: b.waId },
      ],
    ]);
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
    await receive('15552000031', 'hi', Date.now());
    await fx.fakeSender(deviceId, receipts(undefined));
    expect(await readChat(deps, deviceId, '15552000031')).to.deep.equal({
      ok: true,
      data: { chatId: '15552000031', marked: 1, receiptsShown: true, unreadCount: 0 },
    });
    expect(await shownCount()).to.deep.equal({ 'request/shown': 1 });
  });

  it('When the device has no such chat, then unknown_chat and the holder is not asked', async () => {
    const heard = await fx.fakeSender(deviceId, receipts(true));
    expect(await readChat(deps, deviceId, '15552000099')).to.deep.equal({
      ok: false,
      reason: 'unknown_chat',
    });
    expect(heard).to.deep.equal([]);
  });

  it("When the receipts do not go (the holder fails, or the device is not connected), then the holder's outcome, and nothing is marked", async () => {
    const { id } = await receive('15552000041', 'hello', Date.now());
    await fx.fakeSender(deviceId, () => ({ ok: false, error: 'send failed' }));

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
    await fx.sessions.update(deviceId, 'connecting');
    expect(await readChat(deps, deviceId, '15552000041')).to.deep.equal({ ok: false, reason: 'no_device' });
    expect(await deps.chats.unread(deviceId, '15552000041')).to.deep.equal([id]);
    expect(await shownCount()).to.deep.equal({});
  });

  it('When a message is read, then the unread ones before it in its chat are read with it; read again, its receipt goes again and nothing more is marked', async () => {
    const t0 = Date.now() - 10_000;
    const first = await receive('15552000051', 'one', t0);
    const second = await receive('15552000051', 'two', t0 + 1);
    const third = await receive('15552000051', 'three', t0 + 2);
    const heard = (await fx.fakeSender(deviceId, receipts(true))) as MarkReadCommand[];

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
    const { id } = await receive('15552000061', 'mine', Date.now());
    const job = {
      kind: 'send' as const,
      messageId: newMessageId(),
      platformMessageId: newPlatformMessageId(),
      deviceId,
      to: '15552000061',
      contentId: newMessageId(),
      linkGeneration: 0,
      enqueuedAt: Date.now(),
    };
    await deps.messages.claim(job);
    await deps.messages.markSent(job, new Date());
    const other = fx.freshDevice('rc');
    await fx.connect(other);
    const heard = await fx.fakeSender(deviceId, receipts(true));

    expect(await readMessage(deps, other, id), "another device's").to.deep.equal({
      ok: false,
      reason: 'unknown_message',
    });
    expect(await readMessage(deps, deviceId, newMessageId())).to.deep.equal({
      ok: false,
      reason: 'unknown_message',
    });
    expect(await readMessage(deps, deviceId, 'x'.repeat(129)), 'too long to be an id').to.deep.equal({
      ok: false,
      reason: 'unknown_message',
    });
    expect(await readMessage(deps, deviceId, job.messageId)).to.deep.equal({
      ok: false,
      reason: 'not_inbound',
    });
    expect(heard).to.deep.equal([]);
  });
});
