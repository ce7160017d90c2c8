import { expect } from 'chai';
import type { MemoryHolder } from '../test-support.js';
import type { LabelDeps } from './device-labels.js';
import { labelReadFixture } from './label-fixture.js';
import { listChatLabels } from './list-chat-labels.js';

describe('listChatLabels: the labels a chat carries, from the label store (an in-memory label store)', () => {
  let fx: MemoryHolder;
  let deps: Pick<LabelDeps, 'sessions' | 'store'>;
  let deviceId: string;

  beforeEach(async () => {
    ({ fx, deps, deviceId } = await labelReadFixture());
  });

  it("When a chat's labels are read, then they are the labels it carries (none for another chat)", async () => {
    expect(await listChatLabels(deps, deviceId, '15550000001')).to.deep.equal({
      ok: true,
      data: { chatId: '15550000001', labels: [{ id: '5', name: 'VIP', color: 3 }] },
    });
    expect(await listChatLabels(deps, deviceId, '15550000099')).to.deep.equal({
      ok: true,
      data: { chatId: '15550000099', labels: [] },
    });
  });

  it('When no account is linked, then not_linked', async () => {
    fx.sessions.update(deviceId, 'disconnected');
    expect(await listChatLabels(deps, deviceId, '15550000001')).to.deep.equal({
      ok: false,
      reason: 'not_linked',
    });
  });
});
