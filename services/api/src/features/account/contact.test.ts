import { expect } from 'chai';
import { createMetrics, type ContactIdentity, type DeviceCommandReply } from '@mgw/contracts';
import type { ContactAnswer, LookupAllowance } from '@mgw/store';
import { MemoryHolder, said } from '../test-support.js';
import { blockContact } from './block-contact.js';
import { reachContact, type ContactLookups } from './contact-lookups.js';
import { getContactProfile } from './get-contact-profile.js';
import { listBlocklist } from './list-blocklist.js';
import { subscribePresence } from './subscribe-presence.js';

/** The daily lookup cap of one device, in memory (0: no cap), reset in an hour. */
class MemoryLookupCap {
  used = 0;
  constructor(private readonly perDay: number) {}
  async take(_deviceId: string, count: number): Promise<LookupAllowance> {
    if (this.perDay === 0) return { granted: true };
    if (this.used + count > this.perDay) return { granted: false, resetInSeconds: 3600 };
    this.used += count;
    return { granted: true };
  }
}

describe('Reaching another person (block, their profile, their presence) and the blocklist (an in-memory holder)', () => {
  let mh: MemoryHolder;
  const deviceId = 'acc-2';
  const contact = { phone: '15551234567' };
  /** What the device's contact cache knows (the number check keeps its answers there). */
  let cached: Map<string, ContactAnswer>;

  beforeEach(() => {
    mh = new MemoryHolder();
    cached = new Map();
  });

  function depsOf(lookupsPerDay = 0): ContactLookups & { holder: MemoryHolder['holder'] } {
    return {
      holder: mh.holder,
      metrics: createMetrics(),
      cache: {
        getMany: async (_d, phones) =>
          new Map(phones.flatMap((p) => (cached.has(p) ? [[p, cached.get(p)!]] : []))),
      },
      lookups: new MemoryLookupCap(lookupsPerDay),
    };
  }
  const lookups = async (deps: ContactLookups) =>
    Object.fromEntries(
      (await deps.metrics.contactLookups.get()).values.map((v) => [v.labels.outcome, v.value]),
    );

  it('When a contact is blocked, unblocked, its profile read or its presence subscribed, then each command names it and the answer is the holder’s', async () => {
    const deps = depsOf();
    const heard = mh.device(deviceId, (cmd) => {
      if (cmd.type === 'account-block')
        return { ok: true, data: { blocked: cmd.action === 'block', contact } };
      if (cmd.type === 'account-contact-profile')
        return { ok: true, data: { contactProfile: { contact, about: 'Hi' } } } as DeviceCommandReply;
      return { ok: true, data: { subscribed: true, contact } } as DeviceCommandReply;
    });

    expect(await blockContact(deps, deviceId, '15551234567', 'block')).to.deep.equal({
      ok: true,
      data: { blocked: true, contact },
    });
    expect(await blockContact(deps, deviceId, '15551234567', 'unblock')).to.deep.equal({
      ok: true,
      data: { blocked: false, contact },
    });
    expect(await getContactProfile(deps, deviceId, '15551234567')).to.deep.equal({
      ok: true,
      data: { profile: { contact, about: 'Hi' } },
    });
    expect(await subscribePresence(deps, deviceId, '15551234567')).to.deep.equal({
      ok: true,
      data: { subscribed: true, contact },
    });
    expect(heard.map(said)).to.deep.equal([
      { type: 'account-block', deviceId, address: '15551234567', action: 'block' },
      { type: 'account-block', deviceId, address: '15551234567', action: 'unblock' },
      { type: 'account-contact-profile', deviceId, address: '15551234567' },
      { type: 'account-presence-subscribe', deviceId, address: '15551234567' },
    ]);
  });

  it('When the number is not in the contact cache, then each request costs one lookup of the daily cap, and once it is used up lookups_capped with the reset, nothing asked', async () => {
    const deps = depsOf(2);
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
    const deps = depsOf(1);
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

  it("When the holder fails, then its outcome: the contact's not-found code, timeout, or no_device for a device not connected", async () => {
    const deps = depsOf();
    const answers: (DeviceCommandReply | undefined)[] = [{ ok: false, error: 'not-found' }, undefined];
    const heard = mh.device(deviceId, () => answers.shift());
    expect(await getContactProfile(deps, deviceId, '998877665544@lid')).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'not-found',
    });
    expect(await subscribePresence(deps, deviceId, '998877665544@lid')).to.deep.equal({
      ok: false,
      reason: 'timeout',
    });
    mh.sessions.update(deviceId, 'connecting');
    expect(await blockContact(deps, deviceId, '998877665544@lid', 'block')).to.deep.equal({
      ok: false,
      reason: 'no_device',
    });
    expect(heard).to.have.length(2);
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
