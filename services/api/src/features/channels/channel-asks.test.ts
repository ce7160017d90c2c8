import { expect } from 'chai';
import {
  CHANNEL_POSTS_READ,
  keys,
  type Channel,
  type ChannelCommand,
  type DeviceCommand,
  type DeviceCommandReply,
} from '@mgw/contracts';
import { ChannelList, Encryption, MessageStore, storageContext } from '@mgw/store';
import { askChannel, type ChannelDeps } from './channel-ask.js';
import { createChannel } from './create-channel.js';
import { deleteChannel } from './delete-channel.js';
import { followChannel } from './follow-channel.js';
import { getChannel } from './get-channel.js';
import { readPosts } from './read-posts.js';
import { updateChannel } from './update-channel.js';
import { MemoryRedis, MemoryHolder, type HolderAnswer } from '../test-support.js';

/**
 * The channel use cases that ask the device's holder (read, create, update, delete, follow, the
 * posts' counts) without an API: an in-memory Redis and holder answering as the sender's
 * channel-commands.ts. What is checked beside each answer: the device's channel list kept in step
 * with what WhatsApp said, and a picture handed over sealed, by reference, for the ask alone.
 */
describe('Channel asks: getChannel, createChannel, updateChannel, deleteChannel, followChannel, readPosts (an in-memory holder)', () => {
  let fx: MemoryHolder;
  let redis: MemoryRedis;
  const encryption = Encryption.fromEnv();
  let deps: ChannelDeps & { messages: MessageStore };
  let known: ChannelList;
  const ours = '120363000000000001@newsletter';
  const theirs = '120363000000000002@newsletter';
  const jid = (id: string) => ({ kind: 'jid' as const, id });
  const view = (id: string, role: Channel['role'], name = 'News'): Channel => ({
    id,
    name,
    description: '',
    followers: 1,
    role,
    verified: false,
  });
  /** A JPEG's first bytes: what the API passes on once it checked the picture. */
  const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46]);

  beforeEach(() => {
    fx = new MemoryHolder();
    redis = new MemoryRedis();
    known = new ChannelList(redis.client);
    deps = {
      holder: fx.holder,
      known,
      redis: redis.client,
      encryption,
      messages: new MessageStore(redis.client, 3600),
    };
  });

  async function heldDevice(answer: HolderAnswer) {
    const deviceId = fx.freshDevice('ca');
    fx.connect(deviceId);
    const heard = fx.fakeSender(deviceId, answer);
    return { deviceId, heard };
  }
  const reply = (channel: Channel): DeviceCommandReply =>
    ({ ok: true, data: { channel } }) as DeviceCommandReply;
  const listed = async (deviceId: string) => (await known.list(deviceId)).map((c) => [c.id, c.role, c.name]);
  const unaddressed = (heard: DeviceCommand[]) =>
    heard.map(({ requestId: _r, deviceId: _d, ...rest }) => rest);

  it('When a channel is read, then the device lists it by what the account is to it: an owner or admin as its own, a follower as followed, a guest not at all', async () => {
    const roles: Channel['role'][] = ['owner', 'admin', 'follower', 'guest'];
    const answering = [...roles];
    const { deviceId, heard } = await heldDevice(() => reply(view(theirs, answering.shift()!)));
    await known.remember(deviceId, { id: theirs, name: 'Old name', role: 'follower' });
    const seen: unknown[][][] = [];

    for (const role of roles) {
      expect(await getChannel(deps, deviceId, jid(theirs))).to.deep.equal({
        ok: true,
        data: { channel: view(theirs, role) },
      });
      seen.push(await listed(deviceId));
    }

    expect(seen).to.deep.equal([
      [[theirs, 'owner', 'News']],
      [[theirs, 'owner', 'News']],
      [[theirs, 'follower', 'News']],
      [],
    ]);
    expect(unaddressed(heard)).to.deep.equal(Array(4).fill({ type: 'channel-get', key: jid(theirs) }));
  });

  it("When the holder says a channel is not found, then it leaves the list when named by its id (not by an invite) and the outcome is the holder's code; a device not connected is not asked", async () => {
    const { deviceId } = await heldDevice(() => ({ ok: false, error: 'not-found' }));
    await known.remember(deviceId, { id: ours, name: 'Ours', role: 'owner' });
    await known.remember(deviceId, { id: theirs, name: 'Theirs', role: 'follower' });
    const notFound = { ok: false, reason: 'failed', code: 'not-found' };

    expect(await getChannel(deps, deviceId, { kind: 'invite', code: 'AbCdEfGhIjKl' })).to.deep.equal(
      notFound,
    );
    expect((await listed(deviceId)).length, 'an invite names no listed channel').to.equal(2);
    expect(await getChannel(deps, deviceId, jid(theirs))).to.deep.equal(notFound);
    expect(await listed(deviceId)).to.deep.equal([[ours, 'owner', 'Ours']]);

    const offline = fx.freshDevice('ca');
    const heard = fx.fakeSender(offline, () => reply(view(ours, 'owner')));
    expect(await getChannel(deps, offline, jid(ours))).to.deep.equal({ ok: false, reason: 'no_device' });
    expect(heard).to.deep.equal([]);
  });

  it('When a channel is created with a picture, then the picture waits sealed under the request for the holder and is gone after; without one, nothing waits; the new channel is listed as its own', async () => {
    const waiting: { picture: boolean; opened?: Buffer; ttl: number }[] = [];
    const { deviceId, heard } = await heldDevice(async (cmd) => {
      const c = cmd as ChannelCommand & { type: 'channel-create' };
      const key = keys.profilePhoto(cmd.deviceId, cmd.requestId);
      const sealed = await redis.getBuffer(key);
      waiting.push({
        picture: c.picture,
        ...(sealed ? { opened: encryption.open(sealed, storageContext(key, 'photo')) } : {}),
        ttl: await redis.ttl(key),
      });
      return reply(view(ours, 'owner', c.name));
    });

    const pictured = await createChannel(deps, deviceId, { name: 'Ours', description: 'Hello' }, JPEG);
    const plain = await createChannel(deps, deviceId, { name: 'Plain' });

    expect(pictured).to.deep.equal({ ok: true, data: { channel: view(ours, 'owner', 'Ours') } });
    expect(plain).to.deep.equal({ ok: true, data: { channel: view(ours, 'owner', 'Plain') } });
    expect(unaddressed(heard)).to.deep.equal([
      { type: 'channel-create', name: 'Ours', description: 'Hello', picture: true },
      { type: 'channel-create', name: 'Plain', picture: false },
    ]);
    expect(waiting[0]!.opened).to.deep.equal(JPEG);
    expect(waiting[0]!.ttl).to.be.within(1, 60);
    expect(waiting[1]).to.deep.equal({ picture: false, ttl: -2 });
    const keysLeft = await redis.keys(keys.profilePhoto(deviceId, '*'));
    expect(keysLeft, 'no picture is left behind').to.deep.equal([]);
    expect(await listed(deviceId)).to.deep.equal([[ours, 'owner', 'Plain']]);
  });

  it("When a channel is updated, then a new picture is set (handed over), null removes it, none leaves it; the owner's refusal is the holder's code and the list keeps the channel", async () => {
    const pictures: boolean[] = [];
    const { deviceId, heard } = await heldDevice(async (cmd) => {
      const c = cmd as ChannelCommand & { type: 'channel-update' };
      pictures.push((await redis.exists(keys.profilePhoto(cmd.deviceId, cmd.requestId))) === 1);
      if (c.key.kind === 'jid' && c.key.id === theirs) return { ok: false, error: 'not-owner' };
      return reply(view(ours, 'owner', c.changes.name ?? 'News'));
    });
    await known.remember(deviceId, { id: theirs, name: 'Theirs', role: 'follower' });

    expect(await updateChannel(deps, deviceId, jid(ours), { name: 'Renamed' }, JPEG)).to.deep.equal({
      ok: true,
      data: { channel: view(ours, 'owner', 'Renamed') },
    });
    expect((await updateChannel(deps, deviceId, jid(ours), {}, null)).ok).to.equal(true);
    expect((await updateChannel(deps, deviceId, jid(ours), { description: 'About' }, undefined)).ok).to.equal(
      true,
    );
    expect(await updateChannel(deps, deviceId, jid(theirs), { name: 'Mine now' }, undefined)).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'not-owner',
    });

    expect(unaddressed(heard)).to.deep.equal([
      { type: 'channel-update', key: jid(ours), changes: { name: 'Renamed' }, picture: 'set' },
      { type: 'channel-update', key: jid(ours), changes: {}, picture: 'remove' },
      { type: 'channel-update', key: jid(ours), changes: { description: 'About' } },
      { type: 'channel-update', key: jid(theirs), changes: { name: 'Mine now' } },
    ]);
    expect(pictures).to.deep.equal([true, false, false, false]);
    expect(await listed(deviceId)).to.have.deep.members([
      [ours, 'owner', 'News'],
      [theirs, 'follower', 'Theirs'],
    ]);
  });

  it("When a channel is deleted, then the answer is its id and deleted and it leaves the list; the owner's refusal is the holder's code and the list keeps it", async () => {
    const { deviceId, heard } = await heldDevice((cmd) => {
      const c = cmd as ChannelCommand & { type: 'channel-delete' };
      return c.key.kind === 'jid' && c.key.id === ours
        ? reply(view(ours, 'owner'))
        : { ok: false, error: 'not-owner' };
    });
    await known.remember(deviceId, { id: ours, name: 'Ours', role: 'owner' });
    await known.remember(deviceId, { id: theirs, name: 'Theirs', role: 'follower' });

    expect(await deleteChannel(deps, deviceId, jid(theirs))).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'not-owner',
    });
    expect(await deleteChannel(deps, deviceId, jid(ours))).to.deep.equal({
      ok: true,
      data: { id: ours, deleted: true },
    });
    expect(await listed(deviceId)).to.deep.equal([[theirs, 'follower', 'Theirs']]);
    expect(unaddressed(heard).map((c) => c.type)).to.deep.equal(['channel-delete', 'channel-delete']);
  });

  it('When a channel is followed by its invite and then unfollowed, then it joins the list as followed and leaves it', async () => {
    const { deviceId, heard } = await heldDevice((cmd) => {
      const c = cmd as ChannelCommand & { type: 'channel-follow' };
      return reply(view(theirs, c.follow ? 'follower' : 'guest'));
    });
    const invite = { kind: 'invite' as const, code: 'AbCdEfGhIjKl' };

    expect(await followChannel(deps, deviceId, invite, true)).to.deep.equal({
      ok: true,
      data: { channel: view(theirs, 'follower') },
    });
    expect(await listed(deviceId)).to.deep.equal([[theirs, 'follower', 'News']]);
    expect(await followChannel(deps, deviceId, jid(theirs), false)).to.deep.equal({
      ok: true,
      data: { channel: view(theirs, 'guest') },
    });
    expect(await listed(deviceId)).to.deep.equal([]);
    expect(unaddressed(heard)).to.deep.equal([
      { type: 'channel-follow', key: invite, follow: true },
      { type: 'channel-follow', key: jid(theirs), follow: false },
    ]);
  });

  it("When the posts' counts are read, then each post sent through the gateway has its messageId first, the others WhatsApp's fields alone, and the list is not touched", async () => {
    const posts = [
      { platformMessageId: 'WA-1', serverId: '101', views: 5, reactions: { '👍': 2 } },
      { platformMessageId: 'WA-2', serverId: '102', views: 1, reactions: {} },
      { serverId: '103', views: 0, reactions: {} },
    ];
    const { deviceId, heard } = await heldDevice(
      () => ({ ok: true, data: { channel: view(ours, 'owner'), posts } }) as DeviceCommandReply,
    );
    await redis.set(keys.messageByPlatformId(deviceId, 'WA-1'), 'our-message-1');

    const outcome = await readPosts(deps, deviceId, jid(ours));

    expect(outcome).to.deep.equal({
      ok: true,
      data: { channelId: ours, posts: [{ messageId: 'our-message-1', ...posts[0] }, posts[1], posts[2]] },
    });
    const first = outcome.ok ? outcome.data.posts[0]! : {};
    expect(Object.keys(first)[0]).to.equal('messageId');
    expect(unaddressed(heard)).to.deep.equal([
      { type: 'channel-posts', key: jid(ours), count: CHANNEL_POSTS_READ },
    ]);
    expect(await listed(deviceId)).to.deep.equal([]);
  });

  it('When askChannel gets no answer or a failure other than not-found, then the outcome is passed on and the list is kept as it was', async () => {
    const answers: (DeviceCommandReply | undefined)[] = [undefined, { ok: false, error: 'not-owner' }];
    const { deviceId } = await heldDevice(() => answers.shift());
    await known.remember(deviceId, { id: ours, name: 'Ours', role: 'owner' });
    const command = { type: 'channel-delete', key: jid(ours) } as const;
    expect(await askChannel(deps, deviceId, command)).to.deep.equal({ ok: false, reason: 'timeout' });
    expect(await askChannel(deps, deviceId, command)).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'not-owner',
    });
    expect(await listed(deviceId)).to.deep.equal([[ours, 'owner', 'Ours']]);
  });
});
