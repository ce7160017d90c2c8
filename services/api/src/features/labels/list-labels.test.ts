import { expect } from 'chai';
import type { MemoryHolder } from '../test-support.js';
import type { LabelDeps } from './device-labels.js';
import { labelReadFixture } from './label-fixture.js';
import { listLabels } from './list-labels.js';

describe('listLabels: the labels the device learnt, from the label store with no holder to ask (an in-memory label store)', () => {
  let fx: MemoryHolder;
  let deps: Pick<LabelDeps, 'sessions' | 'store'>;
  let deviceId: string;

  beforeEach(async () => {
    ({ fx, deps, deviceId } = await labelReadFixture());
  });

  it('When the device learned labels, then they are listed with their counts of chats', async () => {
    expect(await listLabels(deps, deviceId)).to.deep.equal({
      ok: true,
      data: {
        total: 2,
        labels: [
          { id: '5', name: 'VIP', color: 3, chats: 3 },
          { id: '12', name: 'New order', color: 1, chats: 0 },
        ],
      },
    });
  });

  it('When no account is linked, then not_linked; a device reconnecting still reads what it kept', async () => {
    fx.sessions.update(deviceId, 'disconnected');
    expect(await listLabels(deps, deviceId)).to.deep.equal({ ok: false, reason: 'not_linked' });
    expect(await listLabels(deps, fx.freshDevice('lr')), 'never linked').to.deep.equal({
      ok: false,
      reason: 'not_linked',
    });

    fx.sessions.update(deviceId, 'connecting');
    const listed = await listLabels(deps, deviceId);
    expect(listed.ok && listed.data.total).to.equal(2);
  });
});
