import { expect } from 'chai';
import type { MarkReadCommand, MessageRecord } from '@mgw/contracts';
import type { MemoryHolder } from '../test-support.js';
import { readFixture, receipts, shownCount, type MemoryInbox } from './chat-fixture.js';
import type { ReadDeps } from './mark-read.js';
import { readMessage } from './read-message.js';

/**
 * Marking read without an API: the chats in memory, and an in-memory holder answering mark-read as
 * read-command.ts does.
 */
describe('readMessage: a message marked read with the unread ones before it (an in-memory holder)', () => {
  let mh: MemoryHolder;
  let inbox: MemoryInbox;
  let deps: ReadDeps & { messages: MemoryInbox['messages'] };
  const deviceId = 'rc-1';

  beforeEach(() => {
    ({ mh, inbox, deps } = readFixture(deviceId));
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

  it("When the receipts do not go (the holder fails), then the holder's outcome, and nothing is marked", async () => {
    const { id } = inbox.receive(deviceId, '15552000041');
    mh.fakeSender(deviceId, () => ({ ok: false, error: 'send failed' }));

    expect(await readMessage(deps, deviceId, id)).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'send failed',
    });
    expect(await deps.chats.unread(deviceId, '15552000041')).to.deep.equal([id]);
    expect(await shownCount(deps)).to.deep.equal({});
  });
});
