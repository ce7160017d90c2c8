import { expect } from 'chai';
import type { DeviceCommandReply } from '@mgw/contracts';
import type { ChannelList } from '@mgw/store';
import { channelAskFixture, jid, ours, type ChannelAskFixture } from './channel-fixture.js';
import { askChannel } from './channel-ask.js';

describe("askChannel: an ask of the holder about a channel, the device's list kept as it was unless the channel is gone (an in-memory holder)", () => {
  let deps: ChannelAskFixture['deps'];
  let known: ChannelList;
  let heldDevice: ChannelAskFixture['heldDevice'];
  let listed: ChannelAskFixture['listed'];

  beforeEach(() => {
    ({ deps, known, heldDevice, listed } = channelAskFixture());
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
