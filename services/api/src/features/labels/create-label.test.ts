import { expect } from 'chai';
import type { DeviceCommand } from '@mgw/contracts';
import { said, type MemoryHolder } from '../test-support.js';
import { createLabel } from './create-label.js';
import type { LabelDeps } from './device-labels.js';
import { applying, labelFixture } from './label-fixture.js';

describe('createLabel: the holder is asked for a label edit with a new id (an in-memory holder)', () => {
  let fx: MemoryHolder;
  let deps: LabelDeps;
  let deviceId: string;

  beforeEach(() => {
    ({ fx, deps, deviceId } = labelFixture());
  });

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
  });
});
