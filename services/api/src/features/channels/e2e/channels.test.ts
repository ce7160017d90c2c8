import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { createRedis } from '@mgw/common';
import { CHANNEL_ERRORS, ERRORS, keys, type Channel, type ChannelCommand } from '@mgw/contracts';
import { ChannelList, DeviceCommandResponder, forgetAccount } from '@mgw/store';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
  createPoolToken,
} from '../../../../test/helpers/api.js';

/**
 * The channel routes against the real app and Redis: validation, what the holder's reply becomes,
 * the device's channel list (every answer is checked against the OpenAPI document by `call`). The
 * holder is a stand-in answering as services/sender/src/commands/channel-commands.ts does; the
 * whole way through the real client and the simulator is services/sender/test/e2e/channels.test.ts.
 */
describe('Channel routes (/channels…)', () => {
  let t: TestApi;
  let deviceId: string;
  let token: string;
  let holder: Redis | undefined;
  const asked: ChannelCommand[] = [];
  const ours = '120363000000000001@newsletter';
  const theirs = '120363000000000002@newsletter';
  const view = (id: string, role: Channel['role']): Channel => ({
    id,
    name: id === ours ? 'Ours' : 'Theirs',
    description: '',
    inviteLink: 'https://whatsapp.com/channel/AbCdEfGhIjKl',
    followers: 1,
    role,
    createdAt: '2026-11-25T10:00:00.000Z',
    verified: false,
  });

  before(async () => {
    t = await startApi();
  });
  beforeEach(async () => {
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    asked.length = 0;
    await markConnected(t.redis, deviceId);
    holder = createRedis(t.config.redis.url, 'subscriber', 'test-holder');
    await new DeviceCommandResponder(holder, t.redis).listen(
      async (cmd, reply) => {
        if (!cmd.type.startsWith('channel-') || cmd.deviceId !== deviceId) return;
        const c = cmd as ChannelCommand;
        asked.push(c);
        if (c.type === 'channel-create')
          return reply({ ok: true, data: { channel: { ...view(ours, 'owner'), name: c.name } } });
        const id = c.key.kind === 'jid' ? c.key.id : theirs;
        if (id !== ours && id !== theirs) return reply({ ok: false, error: 'not-found' });
        if ((c.type === 'channel-update' || c.type === 'channel-delete') && id === theirs)
          return reply({ ok: false, error: 'not-owner' });
        if (c.type === 'channel-follow')
          return reply({ ok: true, data: { channel: view(id, c.follow ? 'follower' : 'guest') } });
        return reply({ ok: true, data: { channel: view(id, id === ours ? 'owner' : 'guest') } });
      },
      () => undefined,
    );
  });
  afterEach(async () => {
    await holder?.quit();
    holder = undefined;
  });
  after(() => t.close());

  const channels = (path: string, method = 'GET', json?: unknown, as = token) =>
    call(`${t.api}/channels${path}`, { method, token: as, ...(json === undefined ? {} : { json }) });
  const listed = async (as = token) =>
    ((await channels('', 'GET', undefined, as)).body.data as { channels: { id: string; role: string }[] })
      .channels;

  it('When the body or the id is wrong, then 400 naming the field and nothing is asked of the holder', async () => {
    const cases: [string, string, unknown, string][] = [
      ['/12345@g.us', 'GET', undefined, 'id'],
      ['/a b', 'GET', undefined, 'id'],
      [`/${encodeURIComponent('https://evil.example/channel/AbCdEfGhIjKl')}`, 'GET', undefined, 'id'],
      ['', 'POST', {}, 'name'],
      ['', 'POST', { name: '   ' }, 'name'],
      ['', 'POST', { name: 'x'.repeat(101) }, 'name'],
      ['', 'POST', { name: 'News', description: 'x'.repeat(2049) }, 'description'],
      ['', 'POST', { name: 'News', picture: '%%%' }, 'picture'],
      ['', 'POST', { name: 'News', picture: Buffer.from('plain text').toString('base64') }, 'picture'],
      ['', 'POST', { name: 'News', owner: 'me' }, 'owner'],
      [`/${ours}`, 'PATCH', {}, ''],
      [`/${ours}`, 'PATCH', { name: '' }, 'name'],
    ];
    for (const [path, method, json, field] of cases) {
      const res = await channels(path, method, json);
      expect(res.status, `${method} ${path}`).to.equal(400);
      expect(res.body.error).to.equal(ERRORS.invalidRequest);
      if (field)
        expect((res.body.details as { path: string[] }[])[0]!.path, `${method} ${path}`).to.deep.equal([
          field,
        ]);
    }
    expect(asked).to.deep.equal([]);
  });

  it('When the holder answers, then a channel made or followed is listed for this device only, 404 and 403 are said, and a deleted or unfollowed one leaves the list', async () => {
    const made = await channels('', 'POST', { name: 'Ours', description: 'Hello' });
    expect(made.status).to.equal(200);
    expect(asked[0]).to.include({
      type: 'channel-create',
      name: 'Ours',
      description: 'Hello',
      picture: false,
    });
    const followed = await channels(
      `/${encodeURIComponent('https://whatsapp.com/channel/AbCdEfGhIjKl')}/follow`,
      'POST',
    );
    expect(followed.status).to.equal(200);
    expect(asked[1]).to.deep.include({ key: { kind: 'invite', code: 'AbCdEfGhIjKl' }, follow: true });
    expect((await listed()).map((c) => [c.id, c.role])).to.have.deep.members([
      [ours, 'owner'],
      [theirs, 'follower'],
    ]);
    // Another device's token sees its own (empty) list.
    const other = await createToken(t, { deviceId: freshDeviceId() });
    expect(await listed(other)).to.deep.equal([]);

    const missing = await channels('/120363999999999999', 'GET');
    expect(missing.status).to.equal(404);
    expect(missing.body.error).to.equal(CHANNEL_ERRORS.notFound);
    for (const [method, json] of [
      ['PATCH', { name: 'Mine now' }],
      ['DELETE', undefined],
    ] as const) {
      const refused = await channels(`/${theirs}`, method, json);
      expect(refused.status, method).to.equal(403);
      expect(refused.body.error).to.equal(CHANNEL_ERRORS.notOwner);
    }
    expect((await channels(`/${theirs}/unfollow`, 'POST')).status).to.equal(200);
    const gone = await channels(`/${ours}`, 'DELETE');
    expect(gone.body.data).to.deep.equal({ id: ours, deleted: true });
    expect(await listed()).to.deep.equal([]);
  });

  it('When the device is not connected or a pool token asks, then 409 and 403', async () => {
    const offline = freshDeviceId();
    const offToken = await createToken(t, { deviceId: offline });
    expect((await channels(`/${ours}`, 'GET', undefined, offToken)).status).to.equal(409);
    const poolToken = await createPoolToken(t, 'p-channels');
    for (const [method, path] of [
      ['GET', ''],
      ['POST', ''],
      ['GET', `/${ours}`],
      ['PATCH', `/${ours}`],
      ['DELETE', `/${ours}`],
      ['POST', `/${ours}/follow`],
      ['POST', `/${ours}/unfollow`],
    ] as const) {
      const res = await channels(
        path,
        method,
        method === 'POST' && !path ? { name: 'x' } : undefined,
        poolToken,
      );
      expect(res.status, `${method} ${path}`).to.equal(403);
      expect(res.body).to.deep.equal({ success: false, error: ERRORS.poolTokenNotAllowed });
    }
  });

  it('When more channels are learnt than the bound, then the oldest leave; logout deletes the list', async () => {
    const list = new ChannelList(t.redis, 3);
    for (let i = 0; i < 5; i++) {
      await list.remember(deviceId, {
        id: `12036300000000001${i}@newsletter`,
        name: `n${i}`,
        role: 'follower',
      });
      await new Promise((r) => setTimeout(r, 2));
    }
    expect((await list.list(deviceId)).map((c) => c.name)).to.deep.equal(['n4', 'n3', 'n2']);
    await forgetAccount(t.redis, deviceId);
    expect(await t.redis.exists(keys.deviceChannels(deviceId))).to.equal(0);
  });
});
