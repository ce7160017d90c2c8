import { expect } from 'chai';
import type { MemoryAcceptor, MemoryMessages } from '../test-support.js';
import { channelPostFixture, ours, theirs, type ChannelPostFixture } from './channel-fixture.js';
import { deletePost } from './delete-post.js';

describe('deletePost: a post taken back, out of the queue or by a delete of its own (an in-memory send pipeline)', () => {
  let messages: MemoryMessages;
  let acceptor: MemoryAcceptor;
  let services: ChannelPostFixture['services'];
  let deviceId: string;
  let jobOf: ChannelPostFixture['jobOf'];
  let posted: ChannelPostFixture['posted'];
  let sentPost: ChannelPostFixture['sentPost'];

  beforeEach(() => {
    ({ messages, acceptor, services, deviceId, jobOf, posted, sentPost } = channelPostFixture());
  });

  it('When a post still waiting for its sendAt is deleted, then it leaves the queue at once (deleted); a second delete is refused, the post named under another channel is post_not_found', async () => {
    const id = await posted({ text: 'Tomorrow', sendAt: new Date(Date.now() + 3600_000).toISOString() });

    expect(await deletePost(services, deviceId, ours, id)).to.deep.equal({
      ok: true,
      data: { messageId: id, status: 'deleted' },
    });
    expect((await messages.get(deviceId, id))?.status).to.equal('deleted');
    expect(await deletePost(services, deviceId, ours, id)).to.deep.equal({
      ok: false,
      reason: 'refused',
      refusal: { kind: 'refused', reason: 'not_deletable' },
    });
    expect(await deletePost(services, deviceId, theirs, id)).to.deep.equal({
      ok: false,
      reason: 'post_not_found',
    });
  });

  it("When a sent post is deleted, then a delete of its own is queued to the channel (deleting, the delete's messageId)", async () => {
    const id = await sentPost();

    const outcome = await deletePost(services, deviceId, ours, id);

    const data = outcome.ok
      ? (outcome.data as { messageId: string; deleteMessageId: string; status: string })
      : undefined;
    expect(Object.keys(data ?? {})).to.deep.equal(['messageId', 'deleteMessageId', 'status']);
    expect(data).to.deep.include({ messageId: id, status: 'deleting' });
    const job = await jobOf(data!.deleteMessageId);
    expect(job.to).to.equal(ours);
    expect(acceptor.requests.at(-1)!.content).to.deep.equal({ delete: { messageId: id } });
  });
});
