import { expect } from 'chai';
import { STATUS_LIMITS } from '@mgw/contracts';
import type { MemoryMessages } from '../test-support.js';
import {
  deviceId,
  statusFixture,
  viewers,
  type MemoryStatuses,
  type StatusFixture,
} from './status-fixture.js';
import { listStatuses } from './list-statuses.js';

/**
 * Statuses without an API: posted through the send pipeline (in memory: the acceptor, the records
 * it leaves, marked sent as the sender marks them), their records in an in-memory status store.
 */
describe("listStatuses: the device's statuses with their state and viewers (an in-memory send pipeline and status store)", () => {
  let messages: MemoryMessages;
  let statuses: MemoryStatuses;
  let deps: StatusFixture['deps'];
  let post: StatusFixture['post'];

  beforeEach(() => {
    ({ messages, statuses, deps, post } = statusFixture());
  });

  it('When a status is scheduled, then it is listed as scheduled: its list, kind, audience size and sendAt, no views yet', async () => {
    const sendAt = new Date(Date.now() + 3600_000).toISOString();
    const id = await post({ text: 'Tomorrow: sale', audience: viewers, sendAt });
    expect(await listStatuses(deps, deviceId)).to.deep.equal([
      {
        messageId: id,
        batchId: id,
        status: 'scheduled',
        kind: 'text',
        audienceSize: 2,
        sendAt,
        views: 0,
        viewers: [],
      },
    ]);
  });

  it('When a status was sent and viewed, then it shows when it was sent and expires, and its viewers by phone or LID in the order they viewed', async () => {
    const id = await post({ text: 'Open today', audience: ['15554000001', '123456789012345@lid'] });
    const sentAt = new Date(Date.now() - 60_000);
    messages.sent(deviceId, id, sentAt);
    const views = [
      { jid: '123456789012345@lid', viewedAt: new Date(Date.now() - 30_000).toISOString() },
      { jid: '15554000001@s.whatsapp.net', viewedAt: new Date().toISOString() },
    ];
    statuses.records.get(id)!.viewers.push(...views);

    expect(await listStatuses(deps, deviceId)).to.deep.equal([
      {
        messageId: id,
        batchId: id,
        status: 'sent',
        kind: 'text',
        audienceSize: 2,
        sentAt: sentAt.toISOString(),
        expiresAt: new Date(sentAt.getTime() + STATUS_LIMITS.liveMs).toISOString(),
        views: 2,
        viewers: [
          { viewer: { lid: '123456789012345@lid' }, viewedAt: views[0]!.viewedAt },
          { viewer: { phone: '15554000001' }, viewedAt: views[1]!.viewedAt },
        ],
      },
    ]);
  });

  it("When a status's message record is gone, then it is left out (a failed one shows its error); another device's statuses are not listed", async () => {
    const kept = await post({ text: 'kept', audience: viewers });
    const gone = await post({ text: 'gone', audience: viewers });
    messages.records.delete(`${deviceId}\n${gone}`);
    messages.failed(deviceId, kept, 'not_allowed');
    const listed = await listStatuses(deps, deviceId);
    expect(listed.map((st) => [st.messageId, st.status, st.error])).to.deep.equal([
      [kept, 'failed', 'not_allowed'],
    ]);
    expect(await listStatuses(deps, 'st-other')).to.deep.equal([]);
  });
});
