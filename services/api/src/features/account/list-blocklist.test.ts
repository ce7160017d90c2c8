import { expect } from 'chai';
import type { ContactIdentity } from '@mgw/contracts';
import { MemoryHolder } from '../test-support.js';
import { listBlocklist } from './list-blocklist.js';

describe("listBlocklist: the contacts the account blocked, from the blocklist store (an in-memory holder's sessions)", () => {
  let mh: MemoryHolder;
  const deviceId = 'acc-2';

  beforeEach(() => {
    mh = new MemoryHolder();
  });

  it('When the blocklist is read, then it is the store’s, with each contact as the device knows them (reconnecting too); no account linked is not_linked', async () => {
    const contacts: ContactIdentity[] = [
      { phone: '15551230000' },
      { phone: '15557654321', lid: '998877665544@lid' },
    ];
    const heard = mh.fakeSender(deviceId, () => ({ ok: true }));
    const deps = {
      sessions: mh.sessions,
      blocklist: { list: async (d: string) => (d === deviceId ? contacts : []) },
    };
    const expected = { ok: true, data: { total: 2, contacts } };

    mh.connect(deviceId);
    expect(await listBlocklist(deps, deviceId)).to.deep.equal(expected);
    mh.sessions.update(deviceId, 'connecting');
    expect(await listBlocklist(deps, deviceId)).to.deep.equal(expected);
    mh.sessions.update(deviceId, 'disconnected');
    expect(await listBlocklist(deps, deviceId)).to.deep.equal({ ok: false, reason: 'not_linked' });
    expect(heard, 'no WhatsApp query').to.deep.equal([]);
  });
});
