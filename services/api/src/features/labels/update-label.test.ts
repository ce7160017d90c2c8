import { expect } from 'chai';
import { said, type MemoryHolder } from '../test-support.js';
import type { LabelDeps } from './device-labels.js';
import { applying, labelFixture } from './label-fixture.js';
import type { MemoryLabels } from './memory-labels.js';
import { updateLabel } from './update-label.js';

describe('updateLabel: a known label looked up, then its edit asked of the holder (an in-memory holder and label store)', () => {
  let fx: MemoryHolder;
  let deps: LabelDeps;
  let store: MemoryLabels;
  let deviceId: string;

  beforeEach(() => {
    ({ fx, deps, store, deviceId } = labelFixture());
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

  it('When the label is unknown or no account is linked, then the update is refused before anything is asked', async () => {
    const heard = fx.fakeSender(deviceId, applying);

    expect(await updateLabel(deps, deviceId, '77', { name: 'X' })).to.deep.equal({
      ok: false,
      reason: 'unknown_label',
    });
    const unlinked = fx.freshDevice('lc');
    await store.edit(unlinked, { id: '5', name: 'Kept', color: 0, deleted: false });
    expect(await updateLabel(deps, unlinked, '5', { name: 'X' })).to.deep.equal({
      ok: false,
      reason: 'not_linked',
    });
    expect(heard).to.deep.equal([]);
  });
});
