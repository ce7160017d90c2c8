import { expect } from 'chai';
import type { ChannelCommand } from '@mgw/contracts';
import {
  channelAskFixture,
  jid,
  theirs,
  reply,
  unaddressed,
  view,
  type ChannelAskFixture,
} from './channel-fixture.js';
import { followChannel } from './follow-channel.js';

describe("followChannel: a channel followed or unfollowed, the device's list in step (an in-memory holder)", () => {
  let deps: ChannelAskFixture['deps'];
  let heldDevice: ChannelAskFixture['heldDevice'];
  let listed: ChannelAskFixture['listed'];

  beforeEach(() => {
    ({ deps, heldDevice, listed } = channelAskFixture());
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
});
