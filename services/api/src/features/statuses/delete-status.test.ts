import { expect } from 'chai';
import { STATUS_JID, STATUS_LIMITS } from '@mgw/contracts';
import type { MemoryAcceptor, MemoryMessages } from '../test-support.js';
import {
  deviceId,
  jids,
  statusFixture,
  viewers,
  type MemoryStatuses,
  type StatusFixture,
} from './status-fixture.js';
import { deleteStatus } from './delete-status.js';

/**
 * Statuses without an API: posted through the send pipeline (in memory: the acceptor, the records
 * it leaves, marked sent as the sender marks them), their records in an in-memory status store.
 */
describe('deleteStatus: a status taken back, out of the queue or by a revoke to its audience (in memory)', () => {
  let messages: MemoryMessages;
  let acceptor: MemoryAcceptor;
  let statuses: MemoryStatuses;
  let deps: StatusFixture['deps'];
  let post: StatusFixture['post'];
  let sentStatus: StatusFixture['sentStatus'];

  beforeEach(() => {
    ({ messages, acceptor, statuses, deps, post, sentStatus } = statusFixture());
  });

  it('When the status is still queued, then it is deleted at once (its record reads deleted); a second delete is not_deletable', async () => {
    const id = await post({
      text: 'Later',
      audience: viewers,
      sendAt: new Date(Date.now() + 3600_000).toISOString(),
    });
    expect(await deleteStatus(deps, deviceId, id)).to.deep.equal({
      ok: true,
      data: { messageId: id, status: 'deleted' },
    });
    expect((await messages.get(deviceId, id))?.status).to.equal('deleted');
    expect(await deleteStatus(deps, deviceId, id)).to.deep.equal({ ok: false, reason: 'not_deletable' });
  });

  it('When the status was sent within its day, then its revoke is queued to status@broadcast with the same audience (deleting, its messageId)', async () => {
    const id = await sentStatus(60_000);
    const outcome = await deleteStatus(deps, deviceId, id);
    const data = (outcome as { data: { messageId: string; deleteMessageId: string; status: string } }).data;
    expect(Object.keys(data)).to.deep.equal(['messageId', 'deleteMessageId', 'status']);
    expect(data).to.deep.include({ messageId: id, status: 'deleting' });
    const revoke = acceptor.requests.at(-1)!;
    expect(revoke.recipients).to.deep.equal([STATUS_JID]);
    expect(revoke.content).to.deep.equal({ delete: { messageId: id }, status: { audience: jids } });
    expect((await messages.get(deviceId, data.deleteMessageId))?.status).to.equal('queued');
  });

  it('When the status was sent more than a day ago, or its audience is no longer kept, then expired and nothing is queued', async () => {
    const old = await sentStatus(STATUS_LIMITS.liveMs + 60_000);
    const forgotten = await sentStatus(60_000);
    delete statuses.records.get(forgotten)!.audience;
    const before = acceptor.requests.length;
    expect(await deleteStatus(deps, deviceId, old)).to.deep.equal({ ok: false, reason: 'expired' });
    expect(await deleteStatus(deps, deviceId, forgotten)).to.deep.equal({ ok: false, reason: 'expired' });
    expect(acceptor.requests).to.have.length(before);
  });

  it("When the id is unknown, another device's status, or a message of this device that is no status, then not_found", async () => {
    const theirs = await post({
      text: 'x',
      audience: viewers,
      sendAt: new Date(Date.now() + 3600_000).toISOString(),
    });
    const plain = (await acceptor.accept({
      deviceId,
      kind: 'send',
      recipients: ['15554100000'],
      content: { text: 'hi' },
      priority: 0,
    })) as {
      jobs: { messageId: string }[];
    };
    for (const [device, id] of [
      [deviceId, 'no-such-message'],
      ['st-other', theirs],
      [deviceId, plain.jobs[0]!.messageId],
    ] as const)
      expect(await deleteStatus(deps, device, id), `${device} ${id}`).to.deep.equal({
        ok: false,
        reason: 'not_found',
      });
    expect((await messages.get(deviceId, theirs))?.status).to.equal('scheduled');
  });

  it("When the queue refuses the revoke (the device was logged out), then refused with the queue's reason", async () => {
    const id = await sentStatus(60_000);
    acceptor.refusals.push({ kind: 'refused', reason: 'no_device' });
    expect(await deleteStatus(deps, deviceId, id)).to.deep.equal({
      ok: false,
      reason: 'refused',
      refusal: { kind: 'refused', reason: 'no_device' },
    });
    expect((await messages.get(deviceId, id))?.status).to.equal('sent');
  });
});
