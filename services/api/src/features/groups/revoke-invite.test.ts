import { expect } from 'chai';
import type { DeviceCommandReply } from '@mgw/contracts';
import type { DeviceHolder } from '../test-support.js';
import { detail, gid, groupFixture, unaddressed, type GroupFixture } from './group-fixture.js';
import { revokeInvite } from './revoke-invite.js';

/**
 * The group changes ask the device's holder and answer what it replied; without an API: an
 * in-memory holder answering as the sender's group-commands.ts.
 */
describe("revokeInvite: a group's invite link revoked through the holder (an in-memory holder)", () => {
  let holder: DeviceHolder;
  let heldDevice: GroupFixture['heldDevice'];
  let offlineDevice: GroupFixture['offlineDevice'];

  beforeEach(() => {
    ({ holder, heldDevice, offlineDevice } = groupFixture());
  });

  it('When the invite is revoked, then the holder is asked exactly that and its answer, the new invite, is the outcome', async () => {
    const invite = {
      id: gid,
      code: 'ZyXwVuTsRqPoNmLkJiHgFe',
      link: 'https://chat.whatsapp.com/ZyXwVuTsRqPoNmLkJiHgFe',
    };
    const { deviceId, heard } = await heldDevice(
      () => ({ ok: true, data: { invite } }) as DeviceCommandReply,
    );

    expect(await revokeInvite(holder, deviceId, gid)).to.deep.equal({ ok: true, data: { invite } });
    expect(unaddressed(heard)).to.deep.equal([{ type: 'group-invite', groupId: gid, revoke: true }]);
  });

  it('When the device is not connected, then no_device and nothing is asked of its holder', async () => {
    const { deviceId, heard } = offlineDevice(
      () => ({ ok: true, data: { group: detail } }) as DeviceCommandReply,
    );

    expect(await revokeInvite(holder, deviceId, gid)).to.deep.equal({ ok: false, reason: 'no_device' });
    expect(heard).to.deep.equal([]);
  });
});
