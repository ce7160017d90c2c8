import { expect } from 'chai';
import type { ContactAnswer } from '@mgw/store';
import { MemoryHolder, said } from '../test-support.js';
import { contact, contactDeps } from './account-fixture.js';
import { blockContact } from './block-contact.js';

describe('blockContact: a contact blocked or unblocked through the holder (an in-memory holder)', () => {
  let mh: MemoryHolder;
  const deviceId = 'acc-2';
  /** What the device's contact cache knows (the number check keeps its answers there). */
  let cached: Map<string, ContactAnswer>;

  beforeEach(() => {
    mh = new MemoryHolder();
    cached = new Map();
  });

  it('When a contact is blocked or unblocked, then each command names it and the answer is the holder’s', async () => {
    const deps = contactDeps(mh.holder, cached);
    const heard = mh.device(deviceId, (cmd) =>
      cmd.type === 'account-block'
        ? { ok: true, data: { blocked: cmd.action === 'block', contact } }
        : undefined,
    );

    expect(await blockContact(deps, deviceId, '15551234567', 'block')).to.deep.equal({
      ok: true,
      data: { blocked: true, contact },
    });
    expect(await blockContact(deps, deviceId, '15551234567', 'unblock')).to.deep.equal({
      ok: true,
      data: { blocked: false, contact },
    });
    expect(heard.map(said)).to.deep.equal([
      { type: 'account-block', deviceId, address: '15551234567', action: 'block' },
      { type: 'account-block', deviceId, address: '15551234567', action: 'unblock' },
    ]);
  });

  it('When the device is not connected, then no_device and its holder is not asked', async () => {
    const deps = contactDeps(mh.holder, cached);
    const heard = mh.device(deviceId, () => ({ ok: true, data: { blocked: true, contact } }));
    mh.sessions.update(deviceId, 'connecting');
    expect(await blockContact(deps, deviceId, '998877665544@lid', 'block')).to.deep.equal({
      ok: false,
      reason: 'no_device',
    });
    expect(heard).to.have.length(0);
  });
});
