import { expect } from 'chai';
import type { DeviceCommandReply, MarkReadCommand } from '@mgw/contracts';
import type { MemoryHolder } from '../test-support.js';
import { readFixture, receipts, shownCount, type MemoryInbox } from './chat-fixture.js';
import { READ_RECEIPTS_WAIT_SECONDS, type ReadDeps } from './mark-read.js';
import { readChat } from './read-chat.js';

/**
 * Marking read without an API: the chats in memory, and an in-memory holder answering mark-read as
 * read-command.ts does.
 */
describe('readChat: every unread message of a chat marked read, its receipts through the holder (an in-memory holder)', () => {
  let mh: MemoryHolder;
  let inbox: MemoryInbox;
  let deps: ReadDeps & { messages: MemoryInbox['messages'] };
  const deviceId = 'rc-1';

  beforeEach(() => {
    ({ mh, inbox, deps } = readFixture(deviceId));
  });

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
    expect(await shownCount(deps)).to.deep.equal({ 'request/self': 2 });

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
    expect(await shownCount(deps)).to.deep.equal({ 'request/shown': 1 });
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
    const answers: (DeviceCommandReply | undefined)[] = [{ ok: false, error: 'send failed' }, undefined];
    mh.fakeSender(deviceId, () => answers.shift());

    expect(await readChat(deps, deviceId, '15552000041')).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'send failed',
    });
    expect(await readChat(deps, deviceId, '15552000041')).to.deep.equal({ ok: false, reason: 'timeout' });
    mh.sessions.update(deviceId, 'connecting');
    expect(await readChat(deps, deviceId, '15552000041')).to.deep.equal({ ok: false, reason: 'no_device' });
    expect(await deps.chats.unread(deviceId, '15552000041')).to.deep.equal([id]);
    expect(await shownCount(deps)).to.deep.equal({});
  });
});
