import { expect } from 'chai';
import type { MemoryHolder } from '../test-support.js';
import type { LabelDeps } from './device-labels.js';
import { labelReadFixture } from './label-fixture.js';
import { listLabelChats } from './list-label-chats.js';

describe("listLabelChats: a label's chats, paged, from the label store (an in-memory label store)", () => {
  let fx: MemoryHolder;
  let deps: Pick<LabelDeps, 'sessions' | 'store'>;
  let deviceId: string;

  beforeEach(async () => {
    ({ fx, deps, deviceId } = await labelReadFixture());
  });

  it("When a label's chats are paged, then each page names the label and the next `after`; an unknown label is unknown_label", async () => {
    expect(await listLabelChats(deps, deviceId, '5', { limit: 2 })).to.deep.equal({
      ok: true,
      data: { labelId: '5', chats: ['120363000000000001@g.us', '15550000001'], next: '15550000001' },
    });
    expect(await listLabelChats(deps, deviceId, '5', { limit: 2, after: '15550000001' })).to.deep.equal({
      ok: true,
      data: { labelId: '5', chats: ['15550000002'], next: null },
    });
    expect(await listLabelChats(deps, deviceId, '77', { limit: 2 })).to.deep.equal({
      ok: false,
      reason: 'unknown_label',
    });
  });

  it('When no account is linked, then not_linked', async () => {
    fx.sessions.update(deviceId, 'disconnected');
    expect(await listLabelChats(deps, deviceId, '5', { limit: 2 })).to.deep.equal({
      ok: false,
      reason: 'not_linked',
    });
  });
});
