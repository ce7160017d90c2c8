import { expect } from 'chai';
import type { DeviceCommandReply } from '@mgw/contracts';
import type { DeviceHolder } from '../test-support.js';
import { detail, groupFixture, outcomes, unaddressed, type GroupFixture } from './group-fixture.js';
import { createGroup } from './create-group.js';

/**
 * The group changes ask the device's holder and answer what it replied; without an API: an
 * in-memory holder answering as the sender's group-commands.ts.
 */
describe('createGroup: a group created with its subject and first members through the holder (an in-memory holder)', () => {
  let holder: DeviceHolder;
  let heldDevice: GroupFixture['heldDevice'];
  let offlineDevice: GroupFixture['offlineDevice'];

  beforeEach(() => {
    ({ holder, heldDevice, offlineDevice } = groupFixture());
  });

  it('When a group is created, then the holder is asked with its subject and members, and its answer is the outcome as it came', async () => {
    const data = { group: detail, participants: outcomes };
    const { deviceId, heard } = await heldDevice(() => ({ ok: true, data }) as DeviceCommandReply);

    const created = await createGroup(holder, deviceId, {
      subject: 'Team',
      participants: ['15551234567', '15557654321'],
    });

    expect(created).to.deep.equal({ ok: true, data });
    expect(unaddressed(heard)).to.deep.equal([
      { type: 'group-create', subject: 'Team', participants: ['15551234567', '15557654321'] },
    ]);
  });

  it('When the device is not connected, then no_device and nothing is asked of its holder', async () => {
    const { deviceId, heard } = offlineDevice(
      () => ({ ok: true, data: { group: detail } }) as DeviceCommandReply,
    );
    const participants = ['15551234567'];

    expect(await createGroup(holder, deviceId, { subject: 'Team', participants })).to.deep.equal({
      ok: false,
      reason: 'no_device',
    });
    expect(heard).to.deep.equal([]);
  });
});
