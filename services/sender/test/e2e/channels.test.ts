import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import sharp from 'sharp';
import { useStack, waitFor } from '@mgw/testing';

interface Channel {
  id: string;
  name: string;
  description: string;
  inviteLink?: string;
  followers: number;
  role: string;
  createdAt?: string;
  verified: boolean;
}
interface SimChannel {
  id: string;
  name: string;
  owner: string;
  invite: string;
  followers: string[];
  hasPicture: boolean;
}
type Answer = { data: { channel: Channel }; error?: string; details?: { path: string[] }[] };

describe('e2e: channels — create, read, update, delete, follow and unfollow through the device (real client, simulator)', function () {
  this.timeout(180_000);
  const stack = useStack({ allInOne: true, env: { RATE_LIMIT_BROADCASTS: '1000' } });
  const account = '15552800001';
  const someoneElse = '15552800002';

  let picture: string;

  before(async () => {
    picture = (
      await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } })
        .png()
        .toBuffer()
    ).toString('base64');
    await stack().linkByQr(account);
  });

  const api = <T = Answer>(method: string, path: string, body?: unknown) =>
    stack().api<T>(method, path, body);
  const listed = async () =>
    (await api<{ data: { channels: { id: string; role: string; name: string }[] } }>('GET', '/channels')).body
      .data.channels;

  it('When the account creates a channel with a picture, renames it, reads it by id and by invite link and deletes it, then WhatsApp has each change and the list follows', async () => {
    const made = await api('POST', '/channels', {
      name: 'Spring Sale News',
      description: 'Offers every Monday',
      picture,
    });
    expect(made.status, JSON.stringify(made.body)).to.equal(200);
    const channel = made.body.data.channel;
    expect(channel).to.include({
      name: 'Spring Sale News',
      description: 'Offers every Monday',
      role: 'owner',
      followers: 0,
      verified: false,
    });
    expect(channel.id).to.match(/^\d+@newsletter$/);
    expect(channel.inviteLink).to.match(/^https:\/\/whatsapp\.com\/channel\/[\w-]+$/);
    const sim = await stack().simApi<SimChannel>('GET', `/newsletters/${channel.id}`);
    expect(sim).to.include({ owner: account, name: 'Spring Sale News', hasPicture: true });
    expect((await listed()).find((c) => c.id === channel.id)).to.include({
      role: 'owner',
      name: 'Spring Sale News',
    });

    const renamed = await api('PATCH', `/channels/${channel.id}`, { name: 'Spring Sale', description: '' });
    expect(renamed.status, JSON.stringify(renamed.body)).to.equal(200);
    expect(renamed.body.data.channel).to.include({ name: 'Spring Sale', description: '' });
    expect((await stack().simApi<SimChannel>('GET', `/newsletters/${channel.id}`)).name).to.equal(
      'Spring Sale',
    );
    // Its picture removed, then a new one; a picture that is no image is 400 and changes nothing.
    const bare = await api('PATCH', `/channels/${channel.id}`, { picture: null });
    expect(bare.status, JSON.stringify(bare.body)).to.equal(200);
    expect((await stack().simApi<SimChannel>('GET', `/newsletters/${channel.id}`)).hasPicture).to.equal(
      false,
    );
    const notAnImage = await api('PATCH', `/channels/${channel.id}`, {
      picture: Buffer.from('not an image').toString('base64'),
    });
    expect(notAnImage.status).to.equal(400);
    expect(notAnImage.body.details?.[0]?.path).to.deep.equal(['picture']);
    const pictured = await api('PATCH', `/channels/${channel.id}`, { picture });
    expect(pictured.status, JSON.stringify(pictured.body)).to.equal(200);
    expect((await stack().simApi<SimChannel>('GET', `/newsletters/${channel.id}`)).hasPicture).to.equal(true);

    const byLink = await api('GET', `/channels/${encodeURIComponent(channel.inviteLink!)}`);
    expect(byLink.status, JSON.stringify(byLink.body)).to.equal(200);
    expect(byLink.body.data.channel).to.include({ id: channel.id, name: 'Spring Sale', role: 'owner' });
    const byDigits = await api('GET', `/channels/${channel.id.split('@')[0]}`);
    expect(byDigits.body.data.channel.id).to.equal(channel.id);
    expect((await listed()).find((c) => c.id === channel.id)?.name).to.equal('Spring Sale');

    const ownFollow = await api('POST', `/channels/${channel.id}/unfollow`);
    expect(ownFollow.status, JSON.stringify(ownFollow.body)).to.equal(200);
    expect(ownFollow.body.data.channel.role).to.equal('owner');

    const gone = await api<{ data: { id: string; deleted: boolean } }>('DELETE', `/channels/${channel.id}`);
    expect(gone.status, JSON.stringify(gone.body)).to.equal(200);
    expect(gone.body.data).to.deep.equal({ id: channel.id, deleted: true });
    const after = await api('GET', `/channels/${channel.id}`);
    expect(after.status).to.equal(404);
    expect(after.body.error).to.equal('Channel not found');
    expect((await listed()).map((c) => c.id)).not.to.include(channel.id);
  });

  it("When the account follows someone else's channel by its invite link and unfollows it by id, then WhatsApp counts it a follower and then not; changing or deleting it is 403", async () => {
    const theirs = await stack().simApi<SimChannel>('POST', '/newsletters', {
      owner: someoneElse,
      name: 'Town Hall',
      description: 'News of the town',
    });
    const link = `https://whatsapp.com/channel/${theirs.invite}`;
    const seen = await api('GET', `/channels/${theirs.invite}`);
    expect(seen.body.data.channel).to.include({ id: theirs.id, role: 'guest', name: 'Town Hall' });
    expect((await listed()).map((c) => c.id)).not.to.include(theirs.id);

    const followed = await api('POST', `/channels/${encodeURIComponent(link)}/follow`);
    expect(followed.status, JSON.stringify(followed.body)).to.equal(200);
    expect(followed.body.data.channel).to.include({ id: theirs.id, role: 'follower', followers: 1 });
    expect((await stack().simApi<SimChannel>('GET', `/newsletters/${theirs.id}`)).followers).to.deep.equal([
      account,
    ]);
    expect((await listed()).find((c) => c.id === theirs.id)).to.include({
      role: 'follower',
      name: 'Town Hall',
    });

    for (const [method, body] of [
      ['PATCH', { name: 'Taken over' }],
      ['DELETE', undefined],
    ] as const) {
      const refused = await api(method, `/channels/${theirs.id}`, body);
      expect(refused.status, method).to.equal(403);
      expect(refused.body.error).to.equal('Only the owner of the channel may do this');
    }
    expect((await stack().simApi<SimChannel>('GET', `/newsletters/${theirs.id}`)).name).to.equal('Town Hall');

    const left = await api('POST', `/channels/${theirs.id}/unfollow`);
    expect(left.status, JSON.stringify(left.body)).to.equal(200);
    expect(left.body.data.channel).to.include({ role: 'guest', followers: 0 });
    expect((await stack().simApi<SimChannel>('GET', `/newsletters/${theirs.id}`)).followers).to.deep.equal(
      [],
    );
    expect((await listed()).map((c) => c.id)).not.to.include(theirs.id);
  });

  it('When a channel does not exist or the id is no channel, then 404, and bad input is 400 naming the field', async () => {
    const missing = await api('POST', '/channels/120363999999999999@newsletter/follow');
    expect(missing.status).to.equal(404);
    const unknownInvite = await api('GET', '/channels/NoSuchInviteCode123');
    expect(unknownInvite.status).to.equal(404);
    for (const [method, path, body] of [
      ['GET', '/channels/12@g.us', undefined],
      ['POST', '/channels', { name: '   ' }],
      ['POST', '/channels', { name: 'x', picture: 'not base64!' }],
      ['POST', '/channels', { name: 'x', picture: Buffer.from('no image at all').toString('base64') }],
      ['PATCH', '/channels/120363999999999999@newsletter', {}],
    ] as const) {
      const bad = await api(method, path, body);
      expect(bad.status, `${method} ${path}`).to.equal(400);
      expect(JSON.stringify(bad.body.details ?? bad.body.error), `${method} ${path}`).to.match(
        /id|name|picture|at least one/,
      );
    }
    const made = await api('POST', '/channels', { name: 'Kept' });
    expect(made.status).to.equal(200);
    // Kept in the device's own key (its hash slot), which logout deletes (forgetAccount).
    expect(
      await stack().redis.hexists(keys.deviceChannels(stack().deviceId), made.body.data.channel.id),
    ).to.equal(1);
  });

  it('When the owner of a channel the account follows posts, then a channel.message event carries it; after unfollowing, nothing more comes', async () => {
    const theirs = await stack().simApi<SimChannel>('POST', '/newsletters', {
      owner: someoneElse,
      name: 'Daily Deals',
    });
    expect((await api('POST', `/channels/${theirs.invite}/follow`)).status).to.equal(200);
    const posted = await stack().simApi<{ id: string; serverId: string; delivered: number }>(
      'POST',
      `/newsletters/${theirs.id}/posts`,
      { text: 'Half price on Friday' },
    );
    expect(posted.delivered).to.be.greaterThan(0);
    type Event = { type: string; data: Record<string, unknown> };
    const posts = async () =>
      (await api<{ data: { events: Event[] } }>('GET', '/events')).body.data.events.filter(
        (e) => e.type === 'channel.message',
      );
    await waitFor(async () => (await posts()).length >= 1, {
      timeoutMs: 20_000,
      what: 'a channel.message event',
    });
    const [event] = await posts();
    expect(event!.data).to.deep.include({
      channelId: theirs.id,
      platformMessageId: posted.id,
      serverId: posted.serverId,
      text: 'Half price on Friday',
    });
    expect(event!.data.postedAt).to.be.a('string');
    // A channel post is no chat message: no message.received for it.
    const all = (await api<{ data: { events: Event[] } }>('GET', '/events')).body.data.events;
    expect(all.filter((e) => e.type === 'message.received')).to.deep.equal([]);

    expect((await api('POST', `/channels/${theirs.id}/unfollow`)).status).to.equal(200);
    const after = await stack().simApi<{ delivered: number }>('POST', `/newsletters/${theirs.id}/posts`, {
      text: 'Not for you',
    });
    expect(after.delivered).to.equal(0);
  });

  it('When the account posts to its channel (a text, a picture, one scheduled), then each goes through the queue once, reaches a follower as channel.message, its views and reactions are read back, and an edit and a delete reach the channel', async () => {
    const made = await api('POST', '/channels', { name: 'Opening Hours' });
    expect(made.status, JSON.stringify(made.body)).to.equal(200);
    const channelId = made.body.data.channel.id;
    // A follower: another linked account of the same gateway, following by id.
    const followerPhone = '15552800003';
    const followerToken = await stack().createToken(`e2e-follower-${Date.now().toString(36)}`);
    await stack().linkByQr(followerPhone, 'Follower', followerToken);
    expect(
      (await stack().api('POST', `/channels/${channelId}/follow`, undefined, followerToken)).status,
    ).to.equal(200);

    type Accepted = { data: { messageId: string; batchId: string; channelId: string; sendAt?: string } };
    const postIt = (body: unknown) => api<Accepted>('POST', `/channels/${channelId}/posts`, body);
    const settled = async (messageId: string) => {
      let record: Record<string, unknown> = {};
      await waitFor(
        async () => {
          record = (await api<{ data: Record<string, unknown> }>('GET', `/messages/${messageId}`)).body.data;
          return record.status !== 'queued';
        },
        { timeoutMs: 30_000, what: 'the post leaves the queue' },
      );
      return record;
    };
    type SimPost = {
      id: string;
      serverId: string;
      text?: string;
      kind?: string;
      edited?: true;
      deleted?: true;
    };
    const simPosts = async () =>
      (await stack().simApi<{ posts: SimPost[] }>('GET', `/newsletters/${channelId}/posts`)).posts;

    const text = await postIt({ text: 'Doors open at 9' });
    expect(text.status, JSON.stringify(text.body)).to.equal(202);
    expect(text.body.data).to.include({ channelId, batchId: text.body.data.messageId });
    const sent = await settled(text.body.data.messageId);
    expect(sent, JSON.stringify(sent)).to.include({ status: 'sent', to: channelId });
    const image = await postIt({
      attachment: { type: 'image', base64: picture, caption: 'The new shop front' },
    });
    expect(image.status, JSON.stringify(image.body)).to.equal(202);
    expect(await settled(image.body.data.messageId)).to.include({ status: 'sent' });
    // Posted once each, as the channel's first two posts, with WhatsApp's ids.
    const posts = await simPosts();
    expect(posts.map((p) => [p.id, p.text, p.kind])).to.deep.equal([
      [sent.platformMessageId, 'Doors open at 9', 'extendedTextMessage'],
      [(await settled(image.body.data.messageId)).platformMessageId, 'The new shop front', 'imageMessage'],
    ]);

    // The follower's device gets the post as a channel.message event.
    type Event = { type: string; data: Record<string, unknown> };
    const followerPosts = async () =>
      (
        await stack().api<{ data: { events: Event[] } }>(
          'GET',
          '/events?types=channel.message',
          undefined,
          followerToken,
        )
      ).body.data.events;
    await waitFor(async () => (await followerPosts()).length >= 2, {
      timeoutMs: 20_000,
      what: "the follower's events",
    });
    expect((await followerPosts())[0]!.data).to.deep.include({
      channelId,
      platformMessageId: sent.platformMessageId,
      serverId: posts[0]!.serverId,
      text: 'Doors open at 9',
    });

    // A scheduled post waits; deleted before its time, it is never sent.
    const later = await postIt({
      text: 'Closed on Sunday',
      sendAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(later.status).to.equal(202);
    expect(
      (await api<{ data: { status: string } }>('GET', `/messages/${later.body.data.messageId}`)).body.data
        .status,
    ).to.equal('scheduled');
    const dropped = await api('DELETE', `/channels/${channelId}/posts/${later.body.data.messageId}`);
    expect(dropped.status, JSON.stringify(dropped.body)).to.equal(200);
    expect(dropped.body.data).to.deep.equal({ messageId: later.body.data.messageId, status: 'deleted' });

    // Views and reactions, as WhatsApp counts them, beside the gateway's ids.
    const first = posts[0]!.serverId;
    await stack().simApi('POST', `/newsletters/${channelId}/posts/${first}/views`, {
      viewers: ['15552800011', '15552800012', '15552800013'],
    });
    for (const [phone, code] of [
      ['15552800011', '👍'],
      ['15552800012', '👍'],
      ['15552800013', '❤️'],
    ])
      await stack().simApi('POST', `/newsletters/${channelId}/posts/${first}/reactions`, { phone, code });
    type Stats = { messageId?: string; serverId: string; views: number; reactions: Record<string, number> };
    const stats = await api<{ data: { channelId: string; posts: Stats[] } }>(
      'GET',
      `/channels/${channelId}/posts`,
    );
    expect(stats.status, JSON.stringify(stats.body)).to.equal(200);
    expect(stats.body.data.posts.map((p) => [p.messageId, p.views, p.reactions])).to.deep.equal([
      [image.body.data.messageId, 0, {}],
      [text.body.data.messageId, 3, { '👍': 2, '❤️': 1 }],
    ]);

    // An edit and a delete, each a revision through the queue, reach the channel.
    const edited = await api('PATCH', `/channels/${channelId}/posts/${text.body.data.messageId}`, {
      text: 'Doors open at 10',
    });
    expect(edited.status, JSON.stringify(edited.body)).to.equal(202);
    await waitFor(async () => (await simPosts())[0]!.text === 'Doors open at 10', {
      timeoutMs: 30_000,
      what: 'the edit',
    });
    expect((await simPosts())[0]!.edited).to.equal(true);
    const removed = await api('DELETE', `/channels/${channelId}/posts/${image.body.data.messageId}`);
    expect(removed.status, JSON.stringify(removed.body)).to.equal(202);
    await waitFor(async () => (await simPosts())[1]!.deleted === true, {
      timeoutMs: 30_000,
      what: 'the delete',
    });
  });

  it("When a post goes to someone else's channel, an unknown one, or its body or id is bad, then 403, 404 and 400 naming the field; nothing is queued", async () => {
    const theirs = await stack().simApi<SimChannel>('POST', '/newsletters', {
      owner: someoneElse,
      name: 'Not Mine',
    });
    const notMine = await api('POST', `/channels/${theirs.id}/posts`, { text: 'hello' });
    expect(notMine.status, JSON.stringify(notMine.body)).to.equal(403);
    expect(notMine.body).to.deep.equal({
      success: false,
      error: 'Only the owner of the channel may do this',
    });
    const unknown = await api('POST', '/channels/120363999999999999@newsletter/posts', { text: 'hello' });
    expect(unknown.status).to.equal(404);
    expect(unknown.body).to.deep.equal({ success: false, error: 'Channel not found' });
    const empty = await api('POST', `/channels/${theirs.id}/posts`, {});
    expect(empty.status).to.equal(400);
    expect(empty.body.error).to.equal('Invalid request data');
    const badText = await api('POST', `/channels/${theirs.id}/posts`, { text: 5 });
    expect(badText.status).to.equal(400);
    expect(badText.body.details?.[0]?.path).to.deep.equal(['text']);
    const badId = await api('PATCH', `/channels/${theirs.id}/posts/not-a-post`, { text: 'x' });
    expect(badId.status).to.equal(400);
    expect(badId.body.details?.[0]?.path).to.deep.equal(['messageId']);
    const byInvite = await api(
      'PATCH',
      `/channels/${theirs.invite}/posts/00000000-0000-4000-8000-000000000000`,
      {
        text: 'x',
      },
    );
    expect(byInvite.status).to.equal(400);
    expect(byInvite.body.details?.[0]?.path).to.deep.equal(['id']);
    const noPost = await api('DELETE', `/channels/${theirs.id}/posts/00000000-0000-4000-8000-000000000000`);
    expect(noPost.status).to.equal(404);
    expect(noPost.body).to.deep.equal({ success: false, error: 'Post not found' });
  });
});
