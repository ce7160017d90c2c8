import { expect } from 'chai';
import type { DeviceCommandReply } from '@mgw/contracts';
import type { DeviceHolder } from '../test-support.js';
import { detail, gid, groupFixture, unaddressed, type GroupFixture } from './group-fixture.js';
import { leaveGroup } from './leave-group.js';

/**
 * The group changes ask the device's holder and answer what it replied; without an API: an
 * in-memory holder answering as the sender's group-commands.ts.
 */
describe('leaveGroup: the account leaves a group through the holder (an in-memory holder)', () => {
  let holder: DeviceHolder;
  let heldDevice: GroupFixture['heldDevice'];
  let offlineDevice: GroupFixture['offlineDevice'];

  beforeEach(() => {
    ({ holder, heldDevice, offlineDevice } = groupFixture());
  });

  it("When the account leaves a group, then the answer is the group's id and left, whatever the holder's data; a refusal is the holder's", async () => {
    let leaves = 0;
    const { deviceId, heard } = await heldDevice(() =>
      leaves++ === 0
        ? ({ ok: true, data: { participants: [] } } as DeviceCommandReply)
        : { ok: false, error: 'not-found' },
    );

    expect(await leaveGroup(holder, deviceId, gid)).to.deep.equal({
      ok: true,
      data: { id: gid, left: true },
    });
    expect(await leaveGroup(holder, deviceId, gid)).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'not-found',
    });
    expect(unaddressed(heard)).to.deep.equal([
      { type: 'group-leave', groupId: gid },
      { type: 'group-leave', groupId: gid },
    ]);
  });

  it('When the device is not connected, then no_device and nothing is asked of its holder', async () => {
    const { deviceId, heard } = offlineDevice(
      () => ({ ok: true, data: { group: detail } }) as DeviceCommandReply,
    );

    expect(await leaveGroup(holder, deviceId, gid)).to.deep.equal({ ok: false, reason: 'no_device' });
    expect(heard).to.deep.equal([]);
  });
});
