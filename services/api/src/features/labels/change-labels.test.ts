import { expect } from 'chai';
import { MemoryLabels } from './memory-labels.js';
import type { DeviceCommand, DeviceCommandReply } from '@mgw/contracts';
import { createLabel } from './create-label.js';
import { deleteLabel } from './delete-label.js';
import { knownLabel, linked, type LabelDeps } from './device-labels.js';
import { labelChat } from './label-chat.js';
import { setChatState } from './set-chat-state.js';
import { updateLabel } from './update-label.js';
import { MemoryHolder } from '../test-support.js';

/** What the command said, without its request id (a fresh one each time). */
const said = ({ requestId: _r, ...rest }: DeviceCommand) => rest;

describe('Label changes: the use cases ask the holder for app-state patches (an in-memory holder)', () => {
  let fx: MemoryHolder;
  let deps: LabelDeps;
  let store: MemoryLabels;
  let deviceId: string;

  beforeEach(async () => {
    fx = new MemoryHolder();
    deps = {
      holder: fx.holder,
      sessions: fx.sessions,
      store: (store = new MemoryLabels()),
    };
    deviceId = fx.freshDevice('lc');
    fx.connect(deviceId);
  });

  /** A holder that answers each command with its label (or the chat applied), as the real one does. */
  const applying = (cmd: DeviceCommand): DeviceCommandReply =>
    cmd.type === 'app-state-label'
      ? ({ ok: true, data: { label: cmd.label } } as DeviceCommandReply)
      : ({ ok: true, data: { chat: (cmd as { chat: string }).chat, applied: true } } as DeviceCommandReply);

  it('When a label is created, then the holder is asked for a label edit with a new id of digits, and its answer is the outcome', async () => {
    const heard = fx.fakeSender(deviceId, applying);

    const outcome = await createLabel(deps, deviceId, { name: 'VIP', color: 3 });

    expect(heard).to.have.length(1);
    const cmd = heard[0] as Extract<DeviceCommand, { type: 'app-state-label' }>;
    expect(cmd.label.id).to.match(/^\d{6,10}$/);
    expect(said(cmd)).to.deep.equal({
      type: 'app-state-label',
      deviceId,
      label: { id: cmd.label.id, name: 'VIP', color: 3, deleted: false },
    });
    expect(outcome).to.deep.equal({ ok: true, data: { label: cmd.label } });
    const again = await createLabel(deps, deviceId, { name: 'VIP', color: 3 });
    expect((heard[1] as typeof cmd).label.id, 'each create its own id').to.not.equal(cmd.label.id);
    expect(again.ok).to.equal(true);
  });

  it("When the phone has not shared the app-state key, then the holder's no-key comes back as a failure with that code", async () => {
    fx.fakeSender(deviceId, () => ({ ok: false, error: 'no-key' }));
    expect(await createLabel(deps, deviceId, { name: 'VIP', color: 0 })).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'no-key',
    });
    expect(await setChatState(deps, deviceId, '15550000001', { archived: true })).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'no-key',
    });
  });

  it('When a label is updated, then what the body does not change is kept as the device knows it, and nothing is asked until the edit is applied', async () => {
    await store.edit(deviceId, { id: '5', name: 'VIP', color: 3, deleted: false });
    const heard = fx.fakeSender(deviceId, applying);

    const renamed = await updateLabel(deps, deviceId, '5', { name: 'Gold' });
    const recoloured = await updateLabel(deps, deviceId, '5', { color: 7 });
    if (!renamed.ok || !recoloured.ok) throw new Error('the label is known');
    expect(heard, 'looked up only').to.deep.equal([]);

    expect(await renamed.apply()).to.deep.equal({
      ok: true,
      data: { label: { id: '5', name: 'Gold', color: 3, deleted: false } },
    });
    await recoloured.apply();
    expect(heard.map(said)).to.deep.equal([
      { type: 'app-state-label', deviceId, label: { id: '5', name: 'Gold', color: 3, deleted: false } },
      { type: 'app-state-label', deviceId, label: { id: '5', name: 'VIP', color: 7, deleted: false } },
    ]);
  });

  it('When a label is deleted, then the edit keeps its name and colour with `deleted`', async () => {
    await store.edit(deviceId, { id: '9', name: 'Old', color: 1, deleted: false });
    const heard = fx.fakeSender(deviceId, applying);

    const edit = await deleteLabel(deps, deviceId, '9');
    if (!edit.ok) throw new Error('the label is known');
    expect(await edit.apply()).to.deep.equal({
      ok: true,
      data: { label: { id: '9', name: 'Old', color: 1, deleted: true } },
    });
    expect(heard.map(said)).to.deep.equal([
      { type: 'app-state-label', deviceId, label: { id: '9', name: 'Old', color: 1, deleted: true } },
    ]);
  });

  it('When the label is unknown, deleted, or no account is linked, then an update or delete is refused before anything is asked', async () => {
    await store.edit(deviceId, { id: '4', name: 'Gone', color: 0, deleted: false });
    await store.edit(deviceId, { id: '4', name: 'Gone', color: 0, deleted: true });
    const heard = fx.fakeSender(deviceId, applying);

    expect(await updateLabel(deps, deviceId, '77', { name: 'X' })).to.deep.equal({
      ok: false,
      reason: 'unknown_label',
    });
    expect(await deleteLabel(deps, deviceId, '4'), 'deleted already').to.deep.equal({
      ok: false,
      reason: 'unknown_label',
    });
    const unlinked = fx.freshDevice('lc');
    await store.edit(unlinked, { id: '5', name: 'Kept', color: 0, deleted: false });
    expect(await updateLabel(deps, unlinked, '5', { name: 'X' })).to.deep.equal({
      ok: false,
      reason: 'not_linked',
    });
    expect(await deleteLabel(deps, unlinked, '5')).to.deep.equal({ ok: false, reason: 'not_linked' });
    expect(heard).to.deep.equal([]);
  });

  it('When a chat gets or loses a label, then the answer is the holder’s with the label and which it was', async () => {
    const heard = fx.fakeSender(deviceId, applying);

    expect(
      await labelChat(deps, deviceId, { chat: '15550000001', labelId: '5', labeled: true }),
    ).to.deep.equal({
      ok: true,
      data: { chat: '15550000001', applied: true, labelId: '5', labeled: true },
    });
    expect(
      await labelChat(deps, deviceId, { chat: '15550000001', labelId: '5', labeled: false }),
    ).to.deep.equal({ ok: true, data: { chat: '15550000001', applied: true, labelId: '5', labeled: false } });
    expect(heard.map(said)).to.deep.equal([
      { type: 'app-state-chat-label', deviceId, chat: '15550000001', labelId: '5', labeled: true },
      { type: 'app-state-chat-label', deviceId, chat: '15550000001', labelId: '5', labeled: false },
    ]);
  });

  it("When a chat's state changes, then the holder is asked with the state as given; a device not connected is not asked", async () => {
    const heard = fx.fakeSender(deviceId, applying);
    const state = { muted: true, muteSeconds: 3600 };

    expect(await setChatState(deps, deviceId, '120363000000000001@g.us', state)).to.deep.equal({
      ok: true,
      data: { chat: '120363000000000001@g.us', applied: true },
    });
    expect(heard.map(said)).to.deep.equal([
      { type: 'app-state-chat', deviceId, chat: '120363000000000001@g.us', state },
    ]);

    fx.sessions.update(deviceId, 'connecting');
    expect(await setChatState(deps, deviceId, '15550000001', { pinned: true })).to.deep.equal({
      ok: false,
      reason: 'no_device',
    });
    expect(
      await labelChat(deps, deviceId, { chat: '15550000001', labelId: '5', labeled: true }),
    ).to.deep.equal({
      ok: false,
      reason: 'no_device',
    });
    expect(heard).to.have.length(1);
  });

  it('When a label is looked up, then the device must be linked (connected or reconnecting) and know the label', async () => {
    await store.edit(deviceId, { id: '5', name: 'VIP', color: 3, deleted: false });
    expect(await knownLabel(deps, deviceId, '5')).to.deep.equal({
      ok: true,
      label: { id: '5', name: 'VIP', color: 3, chats: 0 },
    });
    expect(await knownLabel(deps, deviceId, '6')).to.deep.equal({ ok: false, reason: 'unknown_label' });
    fx.sessions.update(deviceId, 'connecting');
    expect(await linked(deps, deviceId)).to.equal(true);
    fx.sessions.update(deviceId, 'disconnected');
    expect(await linked(deps, deviceId)).to.equal(false);
    expect(await knownLabel(deps, deviceId, '5')).to.deep.equal({ ok: false, reason: 'not_linked' });
  });
});
