import { expect } from 'chai';
import type { ChannelCommand } from '@mgw/contracts';
import type { ChannelList } from '@mgw/store';
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
import { deleteChannel } from './delete-channel.js';

describe("deleteChannel: a channel deleted for everyone, gone from the device's list (an in-memory holder)", () => {
  let deps: ChannelAskFixture['deps'];
  let known: ChannelList;
  let heldDevice: ChannelAskFixture['heldDevice'];
  let listed: ChannelAskFixture['listed'];

  beforeEach(() => {
    ({ deps, known, heldDevice, listed } = channelAskFixture());
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
});
