import { expect } from 'chai';
import type { Channel } from '@mgw/contracts';
import type { ChannelList } from '@mgw/store';
import type { MemoryHolder } from '../test-support.js';
import {
  channelAskFixture,
  jid,
  ours,
  theirs,
  reply,
  unaddressed,
  view,
  type ChannelAskFixture,
} from './channel-fixture.js';
import { getChannel } from './get-channel.js';

describe("getChannel: a channel as WhatsApp has it now, the device's list kept in step (an in-memory holder)", () => {
  let fx: MemoryHolder;
  let deps: ChannelAskFixture['deps'];
  let known: ChannelList;
  let heldDevice: ChannelAskFixture['heldDevice'];
  let listed: ChannelAskFixture['listed'];

  beforeEach(() => {
    ({ fx, deps, known, heldDevice, listed } = channelAskFixture());
  });

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
});
