import { expect } from 'chai';
import { said, type MemoryHolder } from '../test-support.js';
import { deleteLabel } from './delete-label.js';
import type { LabelDeps } from './device-labels.js';
import { applying, labelFixture } from './label-fixture.js';
import type { MemoryLabels } from './memory-labels.js';

describe('deleteLabel: a known label looked up, then its deleting edit asked of the holder (an in-memory holder and label store)', () => {
  let fx: MemoryHolder;
  let deps: LabelDeps;
  let store: MemoryLabels;
  let deviceId: string;

  beforeEach(() => {
    ({ fx, deps, store, deviceId } = labelFixture());
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

  it('When the label is deleted already or no account is linked, then the delete is refused before anything is asked', async () => {
    await store.edit(deviceId, { id: '4', name: 'Gone', color: 0, deleted: false });
    await store.edit(deviceId, { id: '4', name: 'Gone', color: 0, deleted: true });
    const heard = fx.fakeSender(deviceId, applying);

    expect(await deleteLabel(deps, deviceId, '4'), 'deleted already').to.deep.equal({
      ok: false,
      reason: 'unknown_label',
    });
    const unlinked = fx.freshDevice('lc');
    await store.edit(unlinked, { id: '5', name: 'Kept', color: 0, deleted: false });
    expect(await deleteLabel(deps, unlinked, '5')).to.deep.equal({ ok: false, reason: 'not_linked' });
    expect(heard).to.deep.equal([]);
  });
});
