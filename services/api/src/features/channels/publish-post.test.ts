import { expect } from 'chai';
import type { ChannelList } from '@mgw/store';
import type { MemoryAcceptor, MemoryMessages } from '../test-support.js';
import {
  channelPostFixture,
  jid,
  ours,
  theirs,
  reply,
  view,
  type ChannelPostFixture,
} from './channel-fixture.js';
import { publishPost } from './publish-post.js';

describe('publishPost: a post to a channel the device may post to, queued like a send (an in-memory holder and send pipeline)', () => {
  let messages: MemoryMessages;
  let acceptor: MemoryAcceptor;
  let deps: ChannelPostFixture['deps'];
  let known: ChannelList;
  let deviceId: string;
  let holderSays: ChannelPostFixture['holderSays'];
  let jobOf: ChannelPostFixture['jobOf'];
  let queued: ChannelPostFixture['queued'];

  beforeEach(() => {
    ({ messages, acceptor, deps, known, deviceId, holderSays, jobOf, queued } = channelPostFixture());
  });

  it('When the device posts to a channel it created through the gateway, then the post is queued to the channel without asking WhatsApp; the answer names it, its list of one and the channel', async () => {
    const heard = holderSays(() => reply(view(ours, 'owner')));
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
      if (key.kind === 'invite') return reply(view(theirs, 'admin'));
      return key.id === theirs ? reply(view(theirs, 'guest')) : { ok: false, error: 'not-found' };
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
});
