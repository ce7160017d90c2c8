import { expect } from 'chai';
import type { DeviceHolder, MemoryHolder } from '../test-support.js';
import { detail, gid, groupFixture, type GroupFixture } from './group-fixture.js';
import { getGroup } from './get-group.js';

/**
 * The group reads ask the device's holder and answer what it replied, without an API: an in-memory
 * holder answering as the sender's group-commands.ts.
 */
describe('getGroup: one group and its members, asked of the holder (an in-memory holder)', () => {
  let fx: MemoryHolder;
  let holder: DeviceHolder;
  let heldDevice: GroupFixture['answeringByType'];

  beforeEach(() => {
    ({ fx, holder, answeringByType: heldDevice } = groupFixture());
  });

  it('When the holder answers, then the read is ok with its reply, and the holder heard exactly that read', async () => {
    const { deviceId, heard } = await heldDevice(() => ({ ok: true, data: { group: detail } }));

    expect(await getGroup(holder, deviceId, gid)).to.deep.equal({ ok: true, data: { group: detail } });
    expect(heard.map(({ requestId: _r, ...rest }) => rest)).to.deep.equal([
      { type: 'group-get', groupId: gid, deviceId },
    ]);
  });

  it("When the holder refuses (a group the account is not in), then failed with the holder's code", async () => {
    const { deviceId } = await heldDevice((type) => ({
      ok: false,
      error: type === 'group-get' ? 'not-found' : 'not-admin',
    }));

    expect(await getGroup(holder, deviceId, gid)).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'not-found',
    });
  });

  it('When the device is not connected, then no_device and nothing is asked of its holder', async () => {
    const deviceId = fx.freshDevice('rg');
    fx.sessions.update(deviceId, 'connecting');
    const heard = fx.fakeSender(deviceId, () => ({ ok: true, data: { groups: [] } }));

    expect(await getGroup(holder, deviceId, gid)).to.deep.equal({ ok: false, reason: 'no_device' });
    expect(heard).to.deep.equal([]);
  });

  it('When the holder never answers, then timeout', async () => {
    const deviceId = fx.freshDevice('rg');
    fx.device(deviceId, () => undefined);
    expect(await getGroup(holder, deviceId, gid)).to.deep.equal({ ok: false, reason: 'timeout' });
  });
});
