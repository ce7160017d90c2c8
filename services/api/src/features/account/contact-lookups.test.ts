import { expect } from 'chai';
import type { ContactAnswer } from '@mgw/store';
import { MemoryHolder } from '../test-support.js';
import { contact, contactDeps, lookups } from './account-fixture.js';
import { blockContact } from './block-contact.js';
import { reachContact } from './contact-lookups.js';
import { getContactProfile } from './get-contact-profile.js';
import { subscribePresence } from './subscribe-presence.js';

describe("reachContact: another person's number costs a lookup of the daily cap (block, their profile, their presence; an in-memory holder)", () => {
  let mh: MemoryHolder;
  const deviceId = 'acc-2';
  /** What the device's contact cache knows (the number check keeps its answers there). */
  let cached: Map<string, ContactAnswer>;

  beforeEach(() => {
    mh = new MemoryHolder();
    cached = new Map();
  });

  it('When the number is not in the contact cache, then each request costs one lookup of the daily cap, and once it is used up lookups_capped with the reset, nothing asked', async () => {
    const deps = contactDeps(mh.holder, cached, 2);
    const heard = mh.device(deviceId, () => ({ ok: true, data: { blocked: true, contact } }));

    expect((await blockContact(deps, deviceId, '15551234567', 'block')).ok).to.equal(true);
    expect((await subscribePresence(deps, deviceId, '15551234568')).ok).to.equal(true);
    for (const outcome of [
      await getContactProfile(deps, deviceId, '15551234569'),
      await blockContact(deps, deviceId, '15551234567', 'unblock'),
      await subscribePresence(deps, deviceId, '15551234560'),
    ])
      expect(outcome).to.deep.equal({ ok: false, reason: 'lookups_capped', resetInSeconds: 3600 });
    expect(heard).to.have.length(2);
    expect(await lookups(deps)).to.deep.equal({ looked_up: 2, capped: 3 });
  });

  it('When the device knows the number (its contact cache) or the contact is a LID, then no lookup is counted, even with the cap used up', async () => {
    const deps = contactDeps(mh.holder, cached, 1);
    mh.device(deviceId, () => ({ ok: true, data: { blocked: true, contact } }));
    cached.set('15551234567', { onWhatsApp: true, jid: '15551234567@s.whatsapp.net' });
    expect(await reachContact(deps, deviceId, '15559999999'), 'uses the one lookup').to.deep.equal({
      ok: true,
    });

    expect((await blockContact(deps, deviceId, '15551234567', 'block')).ok, 'cached').to.equal(true);
    expect((await blockContact(deps, deviceId, '998877665544@lid', 'block')).ok, 'a LID').to.equal(true);
    expect(await reachContact(deps, deviceId, '15550000000')).to.deep.equal({
      ok: false,
      reason: 'lookups_capped',
      resetInSeconds: 3600,
    });
    expect(await lookups(deps)).to.deep.equal({ looked_up: 1, capped: 1 });
  });
});
