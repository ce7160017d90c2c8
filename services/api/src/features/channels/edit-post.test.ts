import { expect } from 'chai';
import type { MemoryAcceptor } from '../test-support.js';
import { channelPostFixture, ours, type ChannelPostFixture } from './channel-fixture.js';
import { editPost } from './edit-post.js';
import { findPost } from './find-post.js';

describe("editPost: a sent post's text edited by an edit of its own (an in-memory send pipeline)", () => {
  let acceptor: MemoryAcceptor;
  let services: ChannelPostFixture['services'];
  let deviceId: string;
  let jobOf: ChannelPostFixture['jobOf'];
  let posted: ChannelPostFixture['posted'];
  let sentPost: ChannelPostFixture['sentPost'];

  beforeEach(() => {
    ({ acceptor, services, deviceId, jobOf, posted, sentPost } = channelPostFixture());
  });

  it("When a post is edited, then a sent one gets an edit of its own queued (editing, the edit's messageId); one not sent yet is refused as not editable", async () => {
    const sent = await sentPost();
    const waiting = await posted({ text: 'Tomorrow', sendAt: new Date(Date.now() + 3600_000).toISOString() });
    const record = async (id: string) => {
      const found = await findPost(services, deviceId, ours, id);
      if (!found.ok) throw new Error(`no post ${id}`);
      return found.data;
    };

    const edited = await editPost(services, deviceId, await record(sent), 'Hello, readers');
    const refused = await editPost(services, deviceId, await record(waiting), 'Later, readers');

    expect(edited.ok && Object.keys(edited.data)).to.deep.equal(['messageId', 'editMessageId', 'status']);
    expect(edited.ok && edited.data).to.deep.include({ messageId: sent, status: 'editing' });
    const job = await jobOf((edited as { data: { editMessageId: string } }).data.editMessageId);
    expect(job.to).to.equal(ours);
    expect(acceptor.requests.at(-1)!.content).to.deep.equal({
      edit: { messageId: sent, text: 'Hello, readers' },
    });
    expect(refused).to.deep.equal({
      ok: false,
      reason: 'refused',
      refusal: { kind: 'refused', reason: 'not_editable' },
    });
  });
});
