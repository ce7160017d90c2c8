import { expect } from 'chai';
import { STATUS_JID, STATUS_LIMITS, keys } from '@mgw/contracts';
import type { MemoryAcceptor, MemoryRedis } from '../test-support.js';
import {
  deviceId,
  jids,
  statusFixture,
  viewers,
  type MemoryStatuses,
  type StatusFixture,
} from './status-fixture.js';
import { postStatus } from './post-status.js';

/**
 * Statuses without an API: posted through the send pipeline (in memory: the acceptor, the records
 * it leaves, marked sent as the sender marks them), their records in an in-memory status store.
 */
describe("postStatus: a status to a list or the account's contacts, through the send pipeline (in memory)", () => {
  let redis: MemoryRedis;
  let acceptor: MemoryAcceptor;
  let statuses: MemoryStatuses;
  let deps: StatusFixture['deps'];
  let post: StatusFixture['post'];

  beforeEach(() => {
    ({ redis, acceptor, statuses, deps, post } = statusFixture());
  });

  it('When a status is posted to a list, then one message to status@broadcast carries the audience and its look, as a list of one named after it; its record is kept', async () => {
    const sendAt = new Date(Date.now() + 3600_000).toISOString();
    const accepted = await postStatus(deps, deviceId, {
      text: 'Sale',
      audience: viewers,
      backgroundColor: '#112233',
      font: 'serif' as never,
      sendAt,
    } as never);
    expect(accepted).to.deep.include({ kind: 'accepted', audienceSize: 2, sendAt });
    const id = (accepted as { messageId: string }).messageId;
    expect((accepted as { batchId: string }).batchId).to.equal(id);
    const [req] = acceptor.requests;
    expect(req).to.deep.include({
      deviceId,
      recipients: [STATUS_JID],
      batchId: id,
      messageIds: [id],
      sendAt: Date.parse(sendAt),
    });
    expect(req!.content.text).to.equal('Sale');
    expect(req!.content.status).to.deep.include({ audience: jids, backgroundColor: '#FF112233' });
    expect(await statuses.audience(deviceId, id)).to.deep.equal(jids);
  });

  it("When the audience is the account's contacts, then its chats of phones and LIDs (not groups); none is refused, so is more than the bound", async () => {
    redis.addMembers(
      keys.deviceChats(deviceId),
      '15554000001',
      '123456789012345@lid',
      '120363000000000001@g.us',
    );
    await post({ text: 'Hi all', audience: 'contacts' });
    expect(acceptor.requests[0]!.content.status?.audience).to.have.members([
      '15554000001@s.whatsapp.net',
      '123456789012345@lid',
    ]);

    const refusedFor = async (device: string) => {
      const outcome = await postStatus(deps, device, { text: 'x', audience: 'contacts' });
      return outcome.kind === 'refused' && outcome.reason === 'invalid'
        ? outcome.details![0]!.message
        : outcome;
    };
    expect(await refusedFor('st-no-chats')).to.include('names nobody');
    const many = Array.from({ length: STATUS_LIMITS.audience + 1 }, (_, i) => String(15550000000 + i));
    redis.addMembers(keys.deviceChats('st-busy'), ...many);
    expect(await refusedFor('st-busy')).to.include(`at most ${STATUS_LIMITS.audience} viewers`);
    expect(acceptor.requests).to.have.length(1);
  });

  it('When the queue refuses the status, or fails, then its record is taken back; a body against the rules is invalid before anything', async () => {
    acceptor.refusals.push({ kind: 'refused', reason: 'no_device' });
    expect(await postStatus(deps, deviceId, { text: 'x', audience: viewers })).to.deep.equal({
      kind: 'refused',
      reason: 'no_device',
    });
    expect(statuses.records.size).to.equal(0);
    acceptor.accept = async () => {
      throw new Error('Redis went away');
    };
    let thrown: unknown;
    await postStatus(deps, deviceId, { text: 'x', audience: viewers }).catch(
      (err: unknown) => (thrown = err),
    );
    expect((thrown as Error).message).to.equal('Redis went away');
    expect(statuses.records.size).to.equal(0);
    expect(
      await postStatus(deps, deviceId, {
        text: 'x',
        audience: viewers,
        attachment: { type: 'image', url: 'https://example.com/a.png' },
        font: 'serif',
      } as never),
    ).to.deep.include({ kind: 'refused', reason: 'invalid' });
  });
});
