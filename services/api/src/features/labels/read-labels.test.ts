import { expect } from 'chai';
import { MemoryLabels } from './memory-labels.js';
import type { LabelDeps } from './device-labels.js';
import { listChatLabels } from './list-chat-labels.js';
import { listLabelChats } from './list-label-chats.js';
import { listLabels } from './list-labels.js';
import { MemoryHolder } from '../test-support.js';

describe('Label reads: the use cases answer from the label store, with no holder to ask (an in-memory label store)', () => {
  let fx: MemoryHolder;
  let deps: Pick<LabelDeps, 'sessions' | 'store'>;
  let store: MemoryLabels;
  let deviceId: string;

  beforeEach(async () => {
    fx = new MemoryHolder();
    deps = { sessions: fx.sessions, store: (store = new MemoryLabels()) };
    deviceId = fx.freshDevice('lr');
    fx.connect(deviceId);
    await store.edit(deviceId, { id: '5', name: 'VIP', color: 3, deleted: false });
    await store.edit(deviceId, { id: '12', name: 'New order', color: 1, deleted: false });
    for (const chat of ['15550000002', '15550000001', '120363000000000001@g.us'])
      await store.associate(deviceId, '5', chat, true);
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

  it('When no account is linked, then every read is not_linked; a device reconnecting still reads what it kept', async () => {
    fx.sessions.update(deviceId, 'disconnected');
    expect(await listLabels(deps, deviceId)).to.deep.equal({ ok: false, reason: 'not_linked' });
    expect(await listLabelChats(deps, deviceId, '5', { limit: 2 })).to.deep.equal({
      ok: false,
      reason: 'not_linked',
    });
    expect(await listChatLabels(deps, deviceId, '15550000001')).to.deep.equal({
      ok: false,
      reason: 'not_linked',
    });
    expect(await listLabels(deps, fx.freshDevice('lr')), 'never linked').to.deep.equal({
      ok: false,
      reason: 'not_linked',
    });

    fx.sessions.update(deviceId, 'connecting');
    const listed = await listLabels(deps, deviceId);
    expect(listed.ok && listed.data.total).to.equal(2);
  });
});
