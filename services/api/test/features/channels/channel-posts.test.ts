import { expect } from 'chai';
import { type Channel, type DeviceCommandReply, type SendJobData } from '@mgw/contracts';
import { ChannelList, markLinked, markUnlinked } from '@mgw/store';
import type { ApiServices } from '../../../src/api-services.js';
import { deletePost } from '../../../src/features/channels/delete-post.js';
import { editPost } from '../../../src/features/channels/edit-post.js';
import { findPost } from '../../../src/features/channels/find-post.js';
import { publishPost } from '../../../src/features/channels/publish-post.js';
import { HolderFixture, type HolderAnswer } from '../../helpers/fake-holder.js';
import { openUseCaseServices, type UseCaseServices } from '../../helpers/use-case-services.js';

/**
 * Channel posts without an API: the services over the run's Redis (no HTTP, no sender) queue them
 * like sends, and a fake sender answers the holder's side (whose channel it is) as the sender's
 * channel-commands.ts. Posts are marked sent as the sender marks them.
 */
describe('Channel posts: publishPost, findPost, editPost, deletePost (services, a fake holder)', () => {
  const fx = new HolderFixture('channel-posts-test');
  let services: ApiServices;
  let deps: Parameters<typeof publishPost>[0];
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

  let opened: UseCaseServices;
  before(async () => {
    opened = await openUseCaseServices('channel-posts-test');
    services = opened.services;
  });
  beforeEach(async () => {
    fx.setUp();
    deviceId = fx.freshDevice('cp');
    await fx.connect(deviceId);
    await markLinked(fx.redis, deviceId);
    known = new ChannelList(fx.redis);
    const { redis, encryption, acceptor, media } = services;
    deps = { holder: fx.holder, known, redis, encryption, acceptor, media };
  });
  afterEach(async () => {
    await services.acceptor.queue(deviceId).obliterate({ force: true });
    await fx.tearDown();
  });
  after(() => opened.close());

  const holderSays = (answer: HolderAnswer) => fx.fakeSender(deviceId, answer);
  const says = (channel: Channel): DeviceCommandReply =>
    ({ ok: true, data: { channel } }) as DeviceCommandReply;
  const jobOf = async (id: string) =>
    (await services.acceptor.queue(deviceId).getJob(id))?.data as SendJobData;
  const queued = () => services.acceptor.queue(deviceId).count();
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
    const job = await jobOf(id);
    await services.messages.claim(job);
    await services.messages.markSent(job, new Date(Date.now() - 60_000));
    return id;
  }

  it('When the device posts to a channel it created through the gateway, then the post is queued to the channel without asking WhatsApp; the answer names it, its list of one and the channel', async () => {
    const heard = await holderSays(() => says(view(ours, 'owner')));
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
    expect(heard).to.deep.equal([]);
  });

  it("When the device posts to a channel it did not create here, then WhatsApp is asked whose it is: an admin's post is queued (the channel now listed as its own), a guest's is not_owner, a missing channel the holder's code", async () => {
    const heard = await holderSays((cmd) => {
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
    const before = await queued();

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
    expect(await queued(), 'nothing more queued').to.equal(before);
    expect(heard.map((c) => c.type)).to.deep.equal(['channel-get', 'channel-get', 'channel-get']);
  });

  it("When the queue refuses the post (the device was logged out), then refused with the queue's reason", async () => {
    await known.remember(deviceId, { id: ours, name: 'Ours', role: 'owner' });
    await fx.sessions.update(deviceId, 'disconnected');
    await markUnlinked(fx.redis, deviceId);

    expect(await publishPost(deps, deviceId, jid(ours), { text: 'Hi' })).to.deep.equal({
      ok: false,
      reason: 'refused',
      refusal: { kind: 'refused', reason: 'no_device' },
    });
    expect(await queued()).to.equal(0);
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
    expect((await services.messages.get(deviceId, id))?.status).to.equal('deleted');
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
    expect((await services.contents.get(deviceId, job.contentId))?.content).to.deep.include({
      delete: { messageId: id },
    });
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
    expect((await services.contents.get(deviceId, job.contentId))?.content).to.deep.include({
      edit: { messageId: sent, text: 'Hello, readers' },
    });
    expect(refused).to.deep.equal({
      ok: false,
      reason: 'refused',
      refusal: { kind: 'refused', reason: 'not_editable' },
    });
  });
});
