import { expect } from 'chai';
import { type Channel, type DeviceCommandReply } from '@mgw/contracts';
import { ChannelList, Encryption } from '@mgw/store';
import {
  MemoryHolder,
  type HolderAnswer,
  MemoryRedis,
  MemoryAcceptor,
  MemoryMessages,
} from '../test-support.js';
import { deletePost } from './delete-post.js';
import { editPost } from './edit-post.js';
import { findPost } from './find-post.js';
import { postToChannel } from './post-to-channel.js';
import { publishPost } from './publish-post.js';

/**
 * Channel posts without an API: the send pipeline in memory (an acceptor that queues them like
 * sends, the message records it leaves), and an in-memory holder answering whose the channel is as
 * the sender's channel-commands.ts. Posts are marked sent as the sender marks them.
 */
describe('Channel posts: publishPost, findPost, editPost, deletePost (an in-memory holder and send pipeline)', () => {
  let fx: MemoryHolder;
  let messages: MemoryMessages;
  let acceptor: MemoryAcceptor;
  let deps: Parameters<typeof publishPost>[0];
  let services: { messages: MemoryMessages; acceptor: MemoryAcceptor; redis: MemoryRedis['client'] };
  let known: ChannelList;
  let deviceId: string;
  const ours = '120363000000000001@newsletter';
  const theirs = '120363000000000002@newsletter';
  const jid = (id: string) => ({ kind: 'jid' as const, id });
  const view = (id: string, role: Channel['role']): Channel => ({
    id,
    name: 'News',
    description: '',
    followers: 1,
    role,
    verified: false,
  });

  beforeEach(() => {
    fx = new MemoryHolder();
    const redis = new MemoryRedis();
    deviceId = fx.freshDevice('cp');
    fx.connect(deviceId);
    known = new ChannelList(redis.client);
    messages = new MemoryMessages();
    acceptor = new MemoryAcceptor(messages);
    services = { messages, acceptor, redis: redis.client };
    deps = {
      holder: fx.holder,
      known,
      redis: redis.client,
      encryption: Encryption.fromEnv(),
      acceptor,
      media: { get: async () => undefined },
    };
  });

  const holderSays = (answer: HolderAnswer) => fx.fakeSender(deviceId, answer);
  const says = (channel: Channel): DeviceCommandReply =>
    ({ ok: true, data: { channel } }) as DeviceCommandReply;
  const jobOf = async (id: string) => (await messages.job(deviceId, id))!;
  const queued = () => acceptor.requests.length;
  /** A post to our channel, queued (or held until `sendAt`). */
  async function posted(body: { text: string; sendAt?: string }): Promise<string> {
    await known.remember(deviceId, { id: ours, name: 'Ours', role: 'owner' });
    const outcome = await publishPost(deps, deviceId, jid(ours), body);
    if (!outcome.ok) throw new Error(`not posted: ${JSON.stringify(outcome)}`);
    return outcome.data.messageId;
  }
  /** A post to our channel, marked sent a minute ago as the sender marks it. */
  async function sentPost(): Promise<string> {
    const id = await posted({ text: 'Hello readers' });
    messages.sent(deviceId, id, new Date(Date.now() - 60_000));
    return id;
  }

  it('When the device posts to a channel it created through the gateway, then the post is queued to the channel without asking WhatsApp; the answer names it, its list of one and the channel', async () => {
    const heard = holderSays(() => says(view(ours, 'owner')));
    await known.remember(deviceId, { id: ours, name: 'Ours', role: 'owner' });
    const sendAt = new Date(Date.now() + 3600_000).toISOString();

    const now = await publishPost(deps, deviceId, jid(ours), { text: 'Hello readers' });
    const later = await publishPost(deps, deviceId, jid(ours), { text: 'Tomorrow', sendAt });

    const data = now.ok ? now.data : undefined;
    expect(Object.keys(data ?? {})).to.deep.equal(['messageId', 'batchId', 'channelId']);
    expect(data).to.deep.include({ batchId: data?.messageId, channelId: ours });
    expect(later.ok && Object.keys(later.data)).to.deep.equal([
      'messageId',
      'batchId',
      'sendAt',
      'channelId',
    ]);
    expect(later.ok && later.data.sendAt).to.equal(sendAt);
    expect((await jobOf(data!.messageId)).to).to.equal(ours);
    expect(
      acceptor.requests.map((r) => [r.recipients, r.content, r.batchId, r.messageIds, r.sendAt]),
    ).to.deep.equal([
      [[ours], { text: 'Hello readers' }, data!.messageId, [data!.messageId], undefined],
      [
        [ours],
        { text: 'Tomorrow' },
        later.ok && later.data.messageId,
        [later.ok && later.data.messageId],
        Date.parse(sendAt),
      ],
    ]);
    expect(heard).to.deep.equal([]);
  });

  it("When the device posts to a channel it did not create here, then WhatsApp is asked whose it is: an admin's post is queued (the channel now listed as its own), a guest's is not_owner, a missing channel the holder's code", async () => {
    const heard = holderSays((cmd) => {
      const key = (cmd as { key: { kind: string; id?: string } }).key;
      if (key.kind === 'invite') return says(view(theirs, 'admin'));
      return key.id === theirs ? says(view(theirs, 'guest')) : { ok: false, error: 'not-found' };
    });

    const byInvite = await publishPost(
      deps,
      deviceId,
      { kind: 'invite', code: 'AbCdEfGhIjKl' },
      { text: 'Hi' },
    );
    expect(byInvite).to.deep.include({ ok: true });
    expect(byInvite.ok && byInvite.data.channelId).to.equal(theirs);
    expect((await known.get(deviceId, theirs))?.role).to.equal('owner');
    const before = queued();

    await known.forget(deviceId, theirs);
    expect(await publishPost(deps, deviceId, jid(theirs), { text: 'Hi' })).to.deep.equal({
      ok: false,
      reason: 'not_owner',
    });
    expect(
      await publishPost(deps, deviceId, jid('120363999999999999@newsletter'), { text: 'Hi' }),
    ).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'not-found',
    });
    expect(queued(), 'nothing more queued').to.equal(before);
    expect(heard.map((c) => c.type)).to.deep.equal(['channel-get', 'channel-get', 'channel-get']);
  });

  it("When the queue refuses the post (the device was logged out), then refused with the queue's reason", async () => {
    await known.remember(deviceId, { id: ours, name: 'Ours', role: 'owner' });
    acceptor.refusals.push({ kind: 'refused', reason: 'no_device' });

    expect(await publishPost(deps, deviceId, jid(ours), { text: 'Hi' })).to.deep.equal({
      ok: false,
      reason: 'refused',
      refusal: { kind: 'refused', reason: 'no_device' },
    });
    expect(messages.records.size, 'nothing written').to.equal(0);
  });

  it("When a post is looked up, then it is found under its own channel only: another channel's id, an unknown id or another device is post_not_found", async () => {
    const id = await posted({ text: 'Hello readers' });
    const notFound = { ok: false, reason: 'post_not_found' };

    const found = await findPost(services, deviceId, ours, id);
    expect(found.ok && found.data).to.deep.include({ messageId: id, to: ours });
    expect(await findPost(services, deviceId, theirs, id)).to.deep.equal(notFound);
    expect(await findPost(services, deviceId, ours, '00000000-0000-4000-8000-000000000000')).to.deep.equal(
      notFound,
    );
    expect(await findPost(services, fx.freshDevice('cp'), ours, id)).to.deep.equal(notFound);
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

  it("When a post names an uploaded media object, then postToChannel queues its id with the object's size and type; an object the device does not have is media_not_found and nothing is queued", async () => {
    const media = {
      get: async (d: string, id: string) =>
        d === deviceId && id === 'm-1'
          ? { mediaId: 'm-1', size: 2048, mimeType: 'image/png', fileName: 'a.png' }
          : undefined,
    };
    const accepted = await postToChannel({ acceptor, media } as never, deviceId, ours, {
      attachment: { type: 'image', mediaId: 'm-1', caption: 'Look' },
    } as never);
    expect(accepted).to.deep.include({ kind: 'accepted' });
    expect(acceptor.requests[0]!.content.attachment).to.deep.equal({
      type: 'image',
      source: { mediaId: 'm-1', size: 2048 },
      caption: 'Look',
      mimeType: 'image/png',
      filename: 'a.png',
    });
    expect(
      await postToChannel({ acceptor, media } as never, deviceId, ours, {
        attachment: { type: 'image', mediaId: 'm-2' },
      } as never),
    ).to.deep.equal({ kind: 'refused', reason: 'media_not_found' });
    expect(acceptor.requests).to.have.length(1);
  });
});
