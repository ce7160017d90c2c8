import { expect } from 'chai';
import type { DeviceCommandReply, GroupCommand } from '@mgw/contracts';
import type { DeviceHolder } from '../test-support.js';
import { CODE, detail, groupFixture, unaddressed, type GroupFixture } from './group-fixture.js';
import { joinGroup } from './join-group.js';

/**
 * The group changes ask the device's holder and answer what it replied; without an API: an
 * in-memory holder answering as the sender's group-commands.ts.
 */
describe('joinGroup: the account joins a group by its link or code through the holder (an in-memory holder)', () => {
  let holder: DeviceHolder;
  let heldDevice: GroupFixture['heldDevice'];
  let offlineDevice: GroupFixture['offlineDevice'];

  beforeEach(() => {
    ({ holder, heldDevice, offlineDevice } = groupFixture());
  });

  it("When a group is joined by its link or its code, then the holder is asked with the code alone; a code no group has is the holder's invite-not-found", async () => {
    const { deviceId, heard } = await heldDevice((cmd) =>
      (cmd as GroupCommand & { code: string }).code === CODE
        ? ({ ok: true, data: { group: detail } } as DeviceCommandReply)
        : { ok: false, error: 'invite-not-found' },
    );

    expect(await joinGroup(holder, deviceId, `https://chat.whatsapp.com/${CODE}`)).to.deep.equal({
      ok: true,
      data: { group: detail },
    });
    expect(await joinGroup(holder, deviceId, CODE)).to.deep.equal({ ok: true, data: { group: detail } });
    expect(await joinGroup(holder, deviceId, 'ZyXwVuTsRqPoNmLkJiHgFe')).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'invite-not-found',
    });
    expect(unaddressed(heard)).to.deep.equal([
      { type: 'group-join', code: CODE },
      { type: 'group-join', code: CODE },
      { type: 'group-join', code: 'ZyXwVuTsRqPoNmLkJiHgFe' },
    ]);
  });

  it('When the device is not connected, then no_device and nothing is asked of its holder', async () => {
    const { deviceId, heard } = offlineDevice(
      () => ({ ok: true, data: { group: detail } }) as DeviceCommandReply,
    );

    expect(await joinGroup(holder, deviceId, CODE)).to.deep.equal({ ok: false, reason: 'no_device' });
    expect(heard).to.deep.equal([]);
  });
});
