import { expect } from 'chai';
import { said, type MemoryHolder } from '../test-support.js';
import { askLabels, knownLabel, linked, type LabelDeps } from './device-labels.js';
import { applying, labelFixture } from './label-fixture.js';
import type { MemoryLabels } from './memory-labels.js';

describe("A device's labels: knownLabel and linked, the lookups before an edit, and askLabels (an in-memory holder and label store)", () => {
  let fx: MemoryHolder;
  let deps: LabelDeps;
  let store: MemoryLabels;
  let deviceId: string;

  beforeEach(() => {
    ({ fx, deps, store, deviceId } = labelFixture());
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

  it('When a label command is asked, then the holder hears it for the device and its reply is the outcome; a device not connected is not asked', async () => {
    const heard = fx.fakeSender(deviceId, applying);
    const command = {
      type: 'app-state-chat-label',
      chat: '15550000001',
      labelId: '5',
      labeled: true,
    } as const;

    expect(await askLabels(deps, deviceId, command)).to.deep.equal({
      ok: true,
      data: { chat: '15550000001', applied: true },
    });
    expect(heard.map(said)).to.deep.equal([{ ...command, deviceId }]);
    fx.sessions.update(deviceId, 'disconnected');
    expect(await askLabels(deps, deviceId, command)).to.deep.equal({ ok: false, reason: 'no_device' });
    expect(heard).to.have.length(1);
  });
});
