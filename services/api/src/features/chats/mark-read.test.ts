import { expect } from 'chai';
import type { DeviceCommandReply, MarkReadCommand } from '@mgw/contracts';
import type { MemoryHolder } from '../test-support.js';
import { readFixture, receipts, shownCount, type MemoryInbox } from './chat-fixture.js';
import { READ_RECEIPTS_WAIT_SECONDS, markRead, type ReadDeps } from './mark-read.js';

/**
 * Marking read without an API: the chats in memory, and an in-memory holder answering mark-read as
 * read-command.ts does.
 */
describe('markRead: read receipts through the holder, then the unread set (an in-memory holder)', () => {
  let mh: MemoryHolder;
  let inbox: MemoryInbox;
  let deps: ReadDeps & { messages: MemoryInbox['messages'] };
  const deviceId = 'rc-1';

  beforeEach(() => {
    ({ mh, inbox, deps } = readFixture(deviceId));
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

  it("When the receipts do not go, then the holder's outcome and nothing is marked; with no keys at all (ids it has no target of), the holder is not asked and nothing is marked", async () => {
    const a = inbox.receive(deviceId, '15552000036');
    const answers: (DeviceCommandReply | undefined)[] = [{ ok: false, error: 'send failed' }];
    const heard = mh.fakeSender(deviceId, () => answers.shift()) as MarkReadCommand[];

    expect(await markRead(deps, deviceId, '15552000036', [a.id])).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'send failed',
    });
    expect(mh.asked[0]!.waitSeconds).to.equal(READ_RECEIPTS_WAIT_SECONDS);
    expect(await deps.chats.unread(deviceId, '15552000036')).to.deep.equal([a.id]);
    expect(await markRead(deps, deviceId, '15552000036', ['in-unknown'])).to.deep.equal({
      ok: true,
      data: { marked: 0, receiptsShown: true, unreadCount: 1 },
    });
    expect(heard, 'no key: no receipt to send').to.have.length(1);
    expect(await shownCount(deps), 'none counted').to.deep.equal({ 'request/shown': 0 });
  });
});
