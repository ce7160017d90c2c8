import { expect } from 'chai';
import type { DeviceHolder, MemoryHolder } from '../test-support.js';
import { gid, groupFixture, type GroupFixture } from './group-fixture.js';
import { listGroups } from './list-groups.js';

/**
 * The group reads ask the device's holder and answer what it replied, without an API: an in-memory
 * holder answering as the sender's group-commands.ts.
 */
describe("listGroups: the device's groups, asked of its holder (an in-memory holder)", () => {
  let fx: MemoryHolder;
  let holder: DeviceHolder;
  let heldDevice: GroupFixture['answeringByType'];

  beforeEach(() => {
    ({ fx, holder, answeringByType: heldDevice } = groupFixture());
  });

  it('When the holder answers, then the read is ok with its reply, and the holder heard exactly that read', async () => {
    const groups = [{ id: gid, subject: 'Team', size: 2, announce: false, isAdmin: true }];
    const { deviceId, heard } = await heldDevice(() => ({ ok: true, data: { groups } }));

    expect(await listGroups(holder, deviceId)).to.deep.equal({ ok: true, data: { groups } });
    expect(heard.map(({ requestId: _r, ...rest }) => rest)).to.deep.equal([
      { type: 'groups-list', deviceId },
    ]);
  });

  it('When the device is not connected, then no_device and nothing is asked of its holder', async () => {
    const deviceId = fx.freshDevice('rg');
    fx.sessions.update(deviceId, 'connecting');
    const heard = fx.fakeSender(deviceId, () => ({ ok: true, data: { groups: [] } }));

    expect(await listGroups(holder, deviceId)).to.deep.equal({ ok: false, reason: 'no_device' });
    expect(heard).to.deep.equal([]);
  });

  it("When the holder's socket is not open, then not_connected", async () => {
    const deviceId = fx.freshDevice('rg');
    fx.device(deviceId, () => ({ ok: false, error: 'not-connected' }));
    expect(await listGroups(holder, deviceId)).to.deep.equal({ ok: false, reason: 'not_connected' });
  });
});
