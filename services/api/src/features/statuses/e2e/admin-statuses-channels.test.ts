import { expect } from 'chai';
import { ERRORS } from '@mgw/contracts';
import { useStack, waitFor } from '@mgw/testing';

const ADMIN_TOKEN = 'statuses-channels-admin-token-0123456789';

type Json = Record<string, unknown>;
interface SimStatus {
  id: string;
  text?: string;
  font?: number;
  backgroundArgb?: number;
  audience: string[];
  readBy: string[];
  deleted?: true;
}
interface StatusSummary {
  messageId: string;
  status: string;
  kind: string;
  audienceSize: number;
  sendAt?: string;
  views: number;
  viewers: { viewer: { phone?: string }; viewedAt: string }[];
}
interface SimChannel {
  id: string;
  name: string;
  owner: string;
  invite: string;
  followers: string[];
}
interface Channel {
  id: string;
  name: string;
  description: string;
  role: string;
  followers: number;
}

const paths = (body: Json) => ((body.details ?? []) as { path: string[] }[]).map((d) => d.path.join('.'));

/**
 * The admin API's status and channel routes (the dashboard's Statuses and Channels tabs) act as the
 * public ones do for the device the path names: what is posted through them, the public API lists
 * and the simulator's contacts receive (whole stack: the real client against the simulator).
 */
describe('Admin API: statuses and channels of a device, as the public /statuses and /channels (whole stack, simulator)', function () {
  this.timeout(240_000);
  const stack = useStack({ allInOne: true, env: { ADMIN_API_TOKEN: ADMIN_TOKEN } });
  const account = '15552900001';
  const viewers = ['15552900011', '15552900012'];
  const someoneElse = '15552900021';

  before(async () => {
    await stack().linkByQr(account);
  });

  const admin = <T = Json>(method: string, path: string, body?: unknown) =>
    stack().adminApi<T>(ADMIN_TOKEN, method, `/devices/${stack().deviceId}${path}`, body);
  const publicStatuses = async () =>
    (await stack().api<{ data: { statuses: StatusSummary[] } }>('GET', '/statuses')).body.data.statuses;
  const simStatuses = async () =>
    (await stack().simApi<{ statuses: SimStatus[] }>('GET', `/statuses/${account}`)).statuses;
  const platformIdOf = async (messageId: string) => {
    let id = '';
    await waitFor(
      async () => {
        const got = await stack().api<{ data: Json }>('GET', `/messages/${messageId}`);
        id = String(got.body.data.platformMessageId ?? '');
        return got.body.data.status === 'sent' && id !== '';
      },
      { timeoutMs: 60_000, what: 'the status is sent' },
    );
    return id;
  };

  it('When the operator posts a text status through the admin API, then the public GET /statuses lists it, the contacts receive it, their views show on both, and the delete reaches them', async () => {
    const posted = await admin<{ data: { messageId: string; audienceSize: number } }>('POST', '/statuses', {
      text: 'Open until 20:00 today',
      backgroundColor: '#25D366',
      font: 'calistoga',
      audience: viewers,
    });
    expect(posted.status, JSON.stringify(posted.body)).to.equal(202);
    const { messageId } = posted.body.data;
    expect(posted.body.data.audienceSize).to.equal(2);
    expect((await publicStatuses()).map((s) => s.messageId)).to.include(messageId);

    const platformId = await platformIdOf(messageId);
    let received: SimStatus | undefined;
    await waitFor(
      async () => (received = (await simStatuses()).find((s) => s.id === platformId))?.readBy.length === 2,
      { timeoutMs: 60_000, what: 'both contacts decrypt the status' },
    );
    expect(received).to.deep.include({ text: 'Open until 20:00 today', font: 8 });
    expect(received!.audience).to.have.members(viewers);

    await stack().simApi('POST', `/statuses/${platformId}/view`, { viewers: [viewers[0]] });
    await waitFor(async () => (await publicStatuses()).find((s) => s.messageId === messageId)?.views === 1, {
      timeoutMs: 30_000,
      what: 'the view counted',
    });
    const byAdmin = await admin<{ data: { statuses: StatusSummary[] } }>('GET', '/statuses');
    expect(byAdmin.status).to.equal(200);
    const mine = byAdmin.body.data.statuses.find((s) => s.messageId === messageId)!;
    expect(mine).to.deep.include({ status: 'sent', kind: 'text', audienceSize: 2, views: 1 });
    expect(mine.viewers.map((v) => v.viewer.phone)).to.deep.equal([viewers[0]]);
    expect(byAdmin.body.data.statuses).to.deep.equal(await publicStatuses());

    const removed = await admin<{ data: Json }>('DELETE', `/statuses/${messageId}`);
    expect(removed.status, JSON.stringify(removed.body)).to.equal(202);
    expect(removed.body.data).to.include({ messageId, status: 'deleting' });
    await waitFor(async () => (await simStatuses()).find((s) => s.id === platformId)?.deleted === true, {
      timeoutMs: 60_000,
      what: 'the contacts see it deleted',
    });
  });

  it('When a status is scheduled through the admin API, then it is listed as scheduled with its time, and deleting it takes it out of the queue; the settings are the public ones', async () => {
    const sendAt = new Date(Date.now() + 3_600_000).toISOString();
    const posted = await admin<{ data: { messageId: string; sendAt: string } }>('POST', '/statuses', {
      attachment: { type: 'image', url: 'https://example.com/menu.jpg' },
      text: 'New menu',
      audience: viewers,
      sendAt,
    });
    expect(posted.status, JSON.stringify(posted.body)).to.equal(202);
    expect(posted.body.data.sendAt).to.equal(sendAt);
    const listed = (await publicStatuses()).find((s) => s.messageId === posted.body.data.messageId);
    expect(listed).to.deep.include({ status: 'scheduled', kind: 'image', sendAt });
    const removed = await admin<{ data: Json }>('DELETE', `/statuses/${posted.body.data.messageId}`);
    expect(removed.status, JSON.stringify(removed.body)).to.equal(200);
    expect(removed.body.data).to.deep.equal({ messageId: posted.body.data.messageId, status: 'deleted' });

    const put = await admin<{ data: Json }>('PUT', '/statuses/settings', { receiveStatuses: true });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect((await stack().api<{ data: Json }>('GET', '/statuses/settings')).body.data).to.deep.equal({
      receiveStatuses: true,
    });
    expect((await admin<{ data: Json }>('GET', '/statuses/settings')).body.data).to.deep.equal({
      receiveStatuses: true,
    });
    // A status that is no status of this device: the public 404.
    const missing = await admin('DELETE', '/statuses/00000000-0000-4000-8000-000000000000');
    expect(missing.status).to.equal(404);
    expect(missing.body).to.deep.equal({ success: false, error: 'Status not found' });
  });

  it('When the operator creates a channel, posts to it, edits the post and follows another through the admin API, then WhatsApp (the simulator) has each and the public API lists them', async () => {
    const made = await admin<{ data: { channel: Channel & { inviteLink: string } } }>('POST', '/channels', {
      name: 'Spring Sale News',
      description: 'Offers every Monday',
    });
    expect(made.status, JSON.stringify(made.body)).to.equal(200);
    const channel = made.body.data.channel;
    expect(channel).to.include({ name: 'Spring Sale News', role: 'owner', followers: 0 });
    expect(await stack().simApi<SimChannel>('GET', `/newsletters/${channel.id}`)).to.include({
      owner: account,
      name: 'Spring Sale News',
    });
    const publicList = await stack().api<{ data: { channels: { id: string; role: string }[] } }>(
      'GET',
      '/channels',
    );
    expect(publicList.body.data.channels.find((c) => c.id === channel.id)).to.include({ role: 'owner' });

    const renamed = await admin<{ data: { channel: Channel } }>('PATCH', `/channels/${channel.id}`, {
      name: 'Spring Sale',
    });
    expect(renamed.status, JSON.stringify(renamed.body)).to.equal(200);
    expect((await stack().simApi<SimChannel>('GET', `/newsletters/${channel.id}`)).name).to.equal(
      'Spring Sale',
    );

    const post = await admin<{ data: { messageId: string; channelId: string } }>(
      'POST',
      `/channels/${channel.id}/posts`,
      { text: 'Doors open at 9' },
    );
    expect(post.status, JSON.stringify(post.body)).to.equal(202);
    const simPosts = async () =>
      (
        await stack().simApi<{ posts: { text?: string; serverId: string }[] }>(
          'GET',
          `/newsletters/${channel.id}/posts`,
        )
      ).posts;
    await waitFor(async () => (await simPosts())[0]?.text === 'Doors open at 9', {
      timeoutMs: 60_000,
      what: 'the post in the channel',
    });
    const stats = await admin<{ data: { posts: { messageId?: string; views: number }[] } }>(
      'GET',
      `/channels/${channel.id}/posts`,
    );
    expect(stats.status, JSON.stringify(stats.body)).to.equal(200);
    expect(stats.body.data.posts.map((p) => p.messageId)).to.deep.equal([post.body.data.messageId]);
    const edited = await admin('PATCH', `/channels/${channel.id}/posts/${post.body.data.messageId}`, {
      text: 'Doors open at 10',
    });
    expect(edited.status, JSON.stringify(edited.body)).to.equal(202);
    await waitFor(async () => (await simPosts())[0]?.text === 'Doors open at 10', {
      timeoutMs: 60_000,
      what: 'the edit in the channel',
    });

    const theirs = await stack().simApi<SimChannel>('POST', '/newsletters', {
      owner: someoneElse,
      name: 'Town Hall',
    });
    const followed = await admin<{ data: { channel: Channel } }>('POST', `/channels/${theirs.invite}/follow`);
    expect(followed.status, JSON.stringify(followed.body)).to.equal(200);
    expect(followed.body.data.channel).to.include({ id: theirs.id, role: 'follower' });
    expect((await stack().simApi<SimChannel>('GET', `/newsletters/${theirs.id}`)).followers).to.deep.equal([
      account,
    ]);
    const notMine = await admin('POST', `/channels/${theirs.id}/posts`, { text: 'hello' });
    expect(notMine.status).to.equal(403);
    expect(notMine.body.error).to.equal('Only the owner of the channel may do this');
    const left = await admin<{ data: { channel: Channel } }>('POST', `/channels/${theirs.id}/unfollow`);
    expect(left.body.data.channel.role).to.equal('guest');
    expect((await stack().simApi<SimChannel>('GET', `/newsletters/${theirs.id}`)).followers).to.deep.equal(
      [],
    );

    const gone = await admin<{ data: Json }>('DELETE', `/channels/${channel.id}`);
    expect(gone.status, JSON.stringify(gone.body)).to.equal(200);
    expect(gone.body.data).to.deep.equal({ id: channel.id, deleted: true });
    const listed = await admin<{ data: { channels: { id: string }[] } }>('GET', '/channels');
    expect(listed.body.data.channels.map((c) => c.id)).to.not.include(channel.id);
  });

  it('When a device id, status id, channel id or post id is malformed, or a body is wrong, then 400 naming it; without the admin token, 401', async () => {
    const cases: [string, string, unknown, string][] = [
      ['GET', '/devices/Bad%20Id!/statuses', undefined, 'deviceId'],
      ['GET', '/devices/Bad%20Id!/channels', undefined, 'deviceId'],
      ['DELETE', `/devices/${stack().deviceId}/statuses/not-a-status`, undefined, 'id'],
      ['GET', `/devices/${stack().deviceId}/channels/12@g.us`, undefined, 'id'],
      ['POST', `/devices/${stack().deviceId}/channels/12@g.us/follow`, undefined, 'id'],
      [
        'PATCH',
        `/devices/${stack().deviceId}/channels/123456789@newsletter/posts/nope`,
        { text: 'x' },
        'messageId',
      ],
      ['POST', `/devices/${stack().deviceId}/statuses`, { text: 'hi', audience: ['12'] }, 'audience.0'],
      [
        'POST',
        `/devices/${stack().deviceId}/statuses`,
        { text: 'hi', audience: viewers, font: 'comic' },
        'font',
      ],
      [
        'PUT',
        `/devices/${stack().deviceId}/statuses/settings`,
        { receiveStatuses: 'yes' },
        'receiveStatuses',
      ],
      ['POST', `/devices/${stack().deviceId}/channels`, { name: '   ' }, 'name'],
    ];
    for (const [method, path, body, field] of cases) {
      const res = await stack().adminApi<Json>(ADMIN_TOKEN, method, path, body);
      expect(res.status, `${method} ${path}`).to.equal(400);
      expect(res.body.error, `${method} ${path}`).to.equal(ERRORS.invalidRequest);
      expect(paths(res.body), `${method} ${path}`).to.deep.equal([field]);
    }
    const withBody = await stack().adminApi<Json>(
      ADMIN_TOKEN,
      'DELETE',
      `/devices/${stack().deviceId}/statuses/00000000-0000-4000-8000-000000000000`,
      { x: 1 },
    );
    expect(withBody.status).to.equal(400);
    const anonymous = await stack().adminApi<Json>(
      'wrong-token',
      'GET',
      `/devices/${stack().deviceId}/statuses`,
    );
    expect(anonymous.status).to.equal(401);
  });
});
