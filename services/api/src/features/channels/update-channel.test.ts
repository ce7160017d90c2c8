import { expect } from 'chai';
import { keys, type ChannelCommand } from '@mgw/contracts';
import type { ChannelList } from '@mgw/store';
import type { MemoryRedis } from '../test-support.js';
import {
  channelAskFixture,
  JPEG,
  jid,
  ours,
  theirs,
  reply,
  unaddressed,
  view,
  type ChannelAskFixture,
} from './channel-fixture.js';
import { updateChannel } from './update-channel.js';

describe("updateChannel: a channel's name, description or picture changed through the holder (an in-memory holder)", () => {
  let redis: MemoryRedis;
  let deps: ChannelAskFixture['deps'];
  let known: ChannelList;
  let heldDevice: ChannelAskFixture['heldDevice'];
  let listed: ChannelAskFixture['listed'];

  beforeEach(() => {
    ({ redis, deps, known, heldDevice, listed } = channelAskFixture());
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
});
