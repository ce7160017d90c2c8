import { expect } from 'chai';
import type { DeviceCommand, DeviceCommandReply, GroupCommand, GroupDetail } from '@mgw/contracts';
import { type DeviceHolder, MemoryHolder, type HolderAnswer } from '../test-support.js';
import { changeParticipants } from './change-participants.js';
import { createGroup } from './create-group.js';
import { joinGroup } from './join-group.js';
import { leaveGroup } from './leave-group.js';
import { revokeInvite } from './revoke-invite.js';
import { updateGroup } from './update-group.js';

/**
 * The group changes (create, members, leave, settings, invite revoke, join) ask the device's holder
 * and answer what it replied, a change of members and a leave naming the group beside it; without
 * an API: an in-memory holder answering as the sender's group-commands.ts.
 */
describe('Group changes: createGroup, changeParticipants, leaveGroup, updateGroup, revokeInvite, joinGroup (an in-memory holder)', () => {
  let fx: MemoryHolder;
  let holder: DeviceHolder;
  const gid = '120363012345678901@g.us';
  const CODE = 'AbCdEfGhIjKlMnOpQrStUv';
  const detail: GroupDetail = {
    id: gid,
    subject: 'Team',
    size: 2,
    announce: false,
    isAdmin: true,
    locked: false,
    participants: [{ contact: { phone: '15551234567' }, admin: true }],
  };
  const outcomes = [
    { participant: '15551234567', ok: true },
    { participant: '15557654321', ok: false, reason: 'not_allowed', code: '403' },
  ];

  beforeEach(() => {
    fx = new MemoryHolder();
    ({ holder } = fx);
  });

  async function heldDevice(answer: HolderAnswer) {
    const deviceId = fx.freshDevice('cg');
    fx.connect(deviceId);
    const heard = fx.fakeSender(deviceId, answer);
    return { deviceId, heard };
  }
  const unaddressed = (heard: DeviceCommand[]) =>
    heard.map(({ requestId: _r, deviceId: _d, ...rest }) => rest);

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

  it('When settings change or the invite is revoked, then the holder is asked exactly that and its answer is the outcome', async () => {
    const invite = {
      id: gid,
      code: 'ZyXwVuTsRqPoNmLkJiHgFe',
      link: 'https://chat.whatsapp.com/ZyXwVuTsRqPoNmLkJiHgFe',
    };
    const { deviceId, heard } = await heldDevice((cmd) => {
      const c = cmd as GroupCommand;
      if (c.type === 'group-update')
        return c.changes.locked
          ? { ok: false, error: 'not-admin' }
          : ({ ok: true, data: { group: { ...detail, ...c.changes } } } as DeviceCommandReply);
      return { ok: true, data: { invite } } as DeviceCommandReply;
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
    expect(await revokeInvite(holder, deviceId, gid)).to.deep.equal({ ok: true, data: { invite } });
    expect(unaddressed(heard)).to.deep.equal([
      { type: 'group-update', groupId: gid, changes: { subject: 'Crew', announce: true } },
      { type: 'group-update', groupId: gid, changes: { locked: true } },
      { type: 'group-invite', groupId: gid, revoke: true },
    ]);
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

  it('When the device is not connected, then every change is no_device and nothing is asked of its holder', async () => {
    const deviceId = fx.freshDevice('cg');
    const heard = fx.fakeSender(
      deviceId,
      () => ({ ok: true, data: { group: detail } }) as DeviceCommandReply,
    );
    const participants = ['15551234567'];
    const noDevice = { ok: false, reason: 'no_device' };

    expect(await createGroup(holder, deviceId, { subject: 'Team', participants })).to.deep.equal(noDevice);
    expect(await changeParticipants(holder, deviceId, gid, { action: 'add', participants })).to.deep.equal(
      noDevice,
    );
    expect(await leaveGroup(holder, deviceId, gid)).to.deep.equal(noDevice);
    expect(await updateGroup(holder, deviceId, gid, { subject: 'Crew' })).to.deep.equal(noDevice);
    expect(await revokeInvite(holder, deviceId, gid)).to.deep.equal(noDevice);
    expect(await joinGroup(holder, deviceId, CODE)).to.deep.equal(noDevice);
    expect(heard).to.deep.equal([]);
  });
});
