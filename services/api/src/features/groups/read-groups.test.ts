import { expect } from 'chai';
import type { DeviceCommandReply, GroupDetail } from '@mgw/contracts';
import { type DeviceHolder, MemoryHolder } from '../test-support.js';
import { getGroup } from './get-group.js';
import { listGroups } from './list-groups.js';
import { readInvite } from './read-invite.js';

/**
 * The group reads (list, one group, its invite) ask the device's holder and answer what it replied,
 * without an API: an in-memory holder answering as the sender's group-commands.ts.
 */
describe('Group reads: listGroups, getGroup, readInvite (an in-memory holder)', () => {
  let fx: MemoryHolder;
  let holder: DeviceHolder;
  const gid = '120363012345678901@g.us';
  const detail: GroupDetail = {
    id: gid,
    subject: 'Team',
    size: 2,
    announce: false,
    isAdmin: true,
    locked: false,
    participants: [{ contact: { phone: '15551234567' }, admin: true }],
  };
  const invite = {
    id: gid,
    code: 'AbCdEfGhIjKlMnOpQrStUv',
    link: 'https://chat.whatsapp.com/AbCdEfGhIjKlMnOpQrStUv',
  };

  beforeEach(() => {
    fx = new MemoryHolder();
    ({ holder } = fx);
  });

  /** A connected device whose holder answers each command with `answer`. */
  async function heldDevice(answer: (type: string) => DeviceCommandReply) {
    const deviceId = fx.freshDevice('rg');
    fx.connect(deviceId);
    const heard = fx.fakeSender(deviceId, (cmd) => answer(cmd.type));
    return { deviceId, heard };
  }

  it('When the holder answers, then each read is ok with its reply, and the holder heard exactly that read', async () => {
    const groups = [{ id: gid, subject: 'Team', size: 2, announce: false, isAdmin: true }];
    const { deviceId, heard } = await heldDevice((type) =>
      type === 'groups-list'
        ? { ok: true, data: { groups } }
        : type === 'group-get'
          ? { ok: true, data: { group: detail } }
          : { ok: true, data: { invite } },
    );

    expect(await listGroups(holder, deviceId)).to.deep.equal({ ok: true, data: { groups } });
    expect(await getGroup(holder, deviceId, gid)).to.deep.equal({ ok: true, data: { group: detail } });
    expect(await readInvite(holder, deviceId, gid)).to.deep.equal({ ok: true, data: { invite } });
    expect(heard.map(({ requestId: _r, ...rest }) => rest)).to.deep.equal([
      { type: 'groups-list', deviceId },
      { type: 'group-get', groupId: gid, deviceId },
      { type: 'group-invite', groupId: gid, revoke: false, deviceId },
    ]);
  });

  it("When the holder refuses (a group the account is not in, an invite only admins read), then failed with the holder's code", async () => {
    const { deviceId } = await heldDevice((type) => ({
      ok: false,
      error: type === 'group-get' ? 'not-found' : 'not-admin',
    }));

    expect(await getGroup(holder, deviceId, gid)).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'not-found',
    });
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

    expect(await listGroups(holder, deviceId)).to.deep.equal({ ok: false, reason: 'no_device' });
    expect(await getGroup(holder, deviceId, gid)).to.deep.equal({ ok: false, reason: 'no_device' });
    expect(await readInvite(holder, deviceId, gid)).to.deep.equal({ ok: false, reason: 'no_device' });
    expect(heard).to.deep.equal([]);
  });

  it("When the holder's socket is not open, or it never answers, then not_connected and timeout", async () => {
    const answers: (DeviceCommandReply | undefined)[] = [{ ok: false, error: 'not-connected' }, undefined];
    const deviceId = fx.freshDevice('rg');
    fx.device(deviceId, () => answers.shift());
    expect(await listGroups(holder, deviceId)).to.deep.equal({ ok: false, reason: 'not_connected' });
    expect(await getGroup(holder, deviceId, gid)).to.deep.equal({ ok: false, reason: 'timeout' });
  });
});
