import { expect } from 'chai';
import type { DeviceHolder, MemoryHolder } from '../test-support.js';
import { gid, groupFixture, invite, type GroupFixture } from './group-fixture.js';
import { readInvite } from './read-invite.js';

/**
 * The group reads ask the device's holder and answer what it replied, without an API: an in-memory
 * holder answering as the sender's group-commands.ts.
 */
describe("readInvite: a group's invite, asked of the holder (an in-memory holder)", () => {
  let fx: MemoryHolder;
  let holder: DeviceHolder;
  let heldDevice: GroupFixture['answeringByType'];

  beforeEach(() => {
    ({ fx, holder, answeringByType: heldDevice } = groupFixture());
  });

  it('When the holder answers, then the read is ok with its reply, and the holder heard exactly that read', async () => {
    const { deviceId, heard } = await heldDevice(() => ({ ok: true, data: { invite } }));

    expect(await readInvite(holder, deviceId, gid)).to.deep.equal({ ok: true, data: { invite } });
    expect(heard.map(({ requestId: _r, ...rest }) => rest)).to.deep.equal([
      { type: 'group-invite', groupId: gid, revoke: false, deviceId },
    ]);
  });

  it("When the holder refuses (an invite only admins read), then failed with the holder's code", async () => {
    const { deviceId } = await heldDevice((type) => ({
      ok: false,
      error: type === 'group-get' ? 'not-found' : 'not-admin',
    }));

    expect(await readInvite(holder, deviceId, gid)).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'not-admin',
    });
  });

  it('When the device is not connected, then no_device and nothing is asked of its holder', async () => {
    const deviceId = fx.freshDevice('rg');
    fx.sessions.update(deviceId, 'connecting');
    const heard = fx.fakeSender(deviceId, () => ({ ok: true, data: { groups: [] } }));

    expect(await readInvite(holder, deviceId, gid)).to.deep.equal({ ok: false, reason: 'no_device' });
    expect(heard).to.deep.equal([]);
  });
});
