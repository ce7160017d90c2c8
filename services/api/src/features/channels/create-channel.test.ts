import { expect } from 'chai';
import { keys, type ChannelCommand } from '@mgw/contracts';
import { type Encryption, storageContext } from '@mgw/store';
import type { MemoryRedis } from '../test-support.js';
import {
  channelAskFixture,
  JPEG,
  ours,
  reply,
  unaddressed,
  view,
  type ChannelAskFixture,
} from './channel-fixture.js';
import { createChannel } from './create-channel.js';

describe("createChannel: a new channel, its picture handed over sealed, listed as the device's own (an in-memory holder)", () => {
  let redis: MemoryRedis;
  let encryption: Encryption;
  let deps: ChannelAskFixture['deps'];
  let heldDevice: ChannelAskFixture['heldDevice'];
  let listed: ChannelAskFixture['listed'];

  beforeEach(() => {
    ({ redis, encryption, deps, heldDevice, listed } = channelAskFixture());
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
});
