import { expect } from 'chai';
import type { DeviceCommandReply, GroupCommand } from '@mgw/contracts';
import type { DeviceHolder } from '../test-support.js';
import { detail, gid, groupFixture, outcomes, unaddressed, type GroupFixture } from './group-fixture.js';
import { changeParticipants } from './change-participants.js';

/**
 * The group changes ask the device's holder and answer what it replied; without an API: an
 * in-memory holder answering as the sender's group-commands.ts.
 */
describe('changeParticipants: members added, removed, promoted or demoted through the holder (an in-memory holder)', () => {
  let holder: DeviceHolder;
  let heldDevice: GroupFixture['heldDevice'];
  let offlineDevice: GroupFixture['offlineDevice'];

  beforeEach(() => {
    ({ holder, heldDevice, offlineDevice } = groupFixture());
  });

  it("When members change, then the answer names the group and the action first, then each member's outcome; a refusal is the holder's code alone", async () => {
    const { deviceId, heard } = await heldDevice((cmd) =>
      (cmd as GroupCommand & { action: string }).action === 'add'
        ? ({ ok: true, data: { participants: outcomes } } as DeviceCommandReply)
        : { ok: false, error: 'not-admin' },
    );
    const participants = ['15551234567', '15557654321'];

    const added = await changeParticipants(holder, deviceId, gid, { action: 'add', participants });
    const promoted = await changeParticipants(holder, deviceId, gid, { action: 'promote', participants });

    expect(added).to.deep.equal({ ok: true, data: { id: gid, action: 'add', participants: outcomes } });
    // The answer's order is what the API has always written: id, action, then the holder's fields.
    expect(Object.keys(added.ok ? added.data : {})).to.deep.equal(['id', 'action', 'participants']);
    expect(promoted).to.deep.equal({ ok: false, reason: 'failed', code: 'not-admin' });
    expect(unaddressed(heard)).to.deep.equal([
      { type: 'group-participants', groupId: gid, action: 'add', participants },
      { type: 'group-participants', groupId: gid, action: 'promote', participants },
    ]);
  });

  it('When the device is not connected, then no_device and nothing is asked of its holder', async () => {
    const { deviceId, heard } = offlineDevice(
      () => ({ ok: true, data: { group: detail } }) as DeviceCommandReply,
    );
    const participants = ['15551234567'];

    expect(await changeParticipants(holder, deviceId, gid, { action: 'add', participants })).to.deep.equal({
      ok: false,
      reason: 'no_device',
    });
    expect(heard).to.deep.equal([]);
  });
});
