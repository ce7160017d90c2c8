import { expect } from 'chai';
import type { DeviceCommandReply, GroupCommand } from '@mgw/contracts';
import type { DeviceHolder } from '../test-support.js';
import { detail, gid, groupFixture, unaddressed, type GroupFixture } from './group-fixture.js';
import { updateGroup } from './update-group.js';

/**
 * The group changes ask the device's holder and answer what it replied; without an API: an
 * in-memory holder answering as the sender's group-commands.ts.
 */
describe("updateGroup: a group's settings changed through the holder (an in-memory holder)", () => {
  let holder: DeviceHolder;
  let heldDevice: GroupFixture['heldDevice'];
  let offlineDevice: GroupFixture['offlineDevice'];

  beforeEach(() => {
    ({ holder, heldDevice, offlineDevice } = groupFixture());
  });

  it("When settings change, then the holder is asked exactly that and its answer is the outcome; a refusal is the holder's code", async () => {
    const { deviceId, heard } = await heldDevice((cmd) => {
      const c = cmd as GroupCommand & { type: 'group-update' };
      return c.changes.locked
        ? { ok: false, error: 'not-admin' }
        : ({ ok: true, data: { group: { ...detail, ...c.changes } } } as DeviceCommandReply);
    });

    expect(await updateGroup(holder, deviceId, gid, { subject: 'Crew', announce: true })).to.deep.equal({
      ok: true,
      data: { group: { ...detail, subject: 'Crew', announce: true } },
    });
    expect(await updateGroup(holder, deviceId, gid, { locked: true })).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'not-admin',
    });
    expect(unaddressed(heard)).to.deep.equal([
      { type: 'group-update', groupId: gid, changes: { subject: 'Crew', announce: true } },
      { type: 'group-update', groupId: gid, changes: { locked: true } },
    ]);
  });

  it('When the device is not connected, then no_device and nothing is asked of its holder', async () => {
    const { deviceId, heard } = offlineDevice(
      () => ({ ok: true, data: { group: detail } }) as DeviceCommandReply,
    );

    expect(await updateGroup(holder, deviceId, gid, { subject: 'Crew' })).to.deep.equal({
      ok: false,
      reason: 'no_device',
    });
    expect(heard).to.deep.equal([]);
  });
});
