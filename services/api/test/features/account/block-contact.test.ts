import { expect } from 'chai';
import type { DeviceCommand, DeviceCommandReply } from '@mgw/contracts';
import { ContactCache, ContactIdentities } from '@mgw/store';
import type { AccountDeps } from '../../../src/features/account/account-deps.js';
import { blockContact } from '../../../src/features/account/block-contact.js';
import { getContactProfile } from '../../../src/features/account/get-contact-profile.js';
import { listBlocklist } from '../../../src/features/account/list-blocklist.js';
import { subscribePresence } from '../../../src/features/account/subscribe-presence.js';
import { HolderFixture } from '../../helpers/fake-holder.js';
import { accountDepsOf } from './account-fixture.js';

/** What the command said, without its request id (a fresh one each time). */
const said = ({ requestId: _r, ...rest }: DeviceCommand) => rest;

describe('Reaching another person (block, their profile, their presence) and the blocklist (real Redis, a fake sender)', () => {
  const fx = new HolderFixture('block-contact-test');
  let deviceId: string;
  const contact = { phone: '15551234567' };

  beforeEach(async () => {
    fx.setUp();
    deviceId = fx.freshDevice('bc');
    await fx.connect(deviceId);
  });
  afterEach(() => fx.tearDown());

  const lookups = async (deps: AccountDeps) =>
    Object.fromEntries(
      (await deps.metrics.contactLookups.get()).values.map((v) => [v.labels.outcome, v.value]),
    );

  it('When a contact is blocked, unblocked, its profile read or its presence subscribed, then each command names it and the answer is the holder’s', async () => {
    const deps = accountDepsOf(fx);
    const heard = await fx.fakeSender(deviceId, (cmd) => {
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
    const deps = accountDepsOf(fx, 2);
    const heard = await fx.fakeSender(deviceId, () => ({ ok: true, data: { blocked: true, contact } }));

    expect((await blockContact(deps, deviceId, '15551234567', 'block')).ok).to.equal(true);
    expect((await subscribePresence(deps, deviceId, '15551234568')).ok).to.equal(true);
    for (const outcome of [
      await getContactProfile(deps, deviceId, '15551234569'),
      await blockContact(deps, deviceId, '15551234567', 'unblock'),
    ]) {
      expect(outcome.ok).to.equal(false);
      const capped = outcome as { reason: string; resetInSeconds: number };
      expect(capped.reason).to.equal('lookups_capped');
      expect(capped.resetInSeconds).to.be.within(1, 24 * 3600);
    }
    expect(heard).to.have.length(2);
    expect(await lookups(deps)).to.deep.equal({ looked_up: 2, capped: 2 });
  });

  it('When the device knows the number (its contact cache) or the contact is a LID, then no lookup is counted, even with the cap used up', async () => {
    const deps = accountDepsOf(fx, 1);
    await fx.fakeSender(deviceId, () => ({ ok: true, data: { blocked: true, contact } }));
    // As the number check keeps what it looked up.
    await new ContactCache(fx.redis, 3600).putMany(
      deviceId,
      new Map([['15551234567', { onWhatsApp: true, jid: '15551234567@s.whatsapp.net' }]]),
    );
    expect((await blockContact(deps, deviceId, '15559999999', 'block')).ok, 'uses the one lookup').to.equal(
      true,
    );

    expect((await blockContact(deps, deviceId, '15551234567', 'block')).ok, 'cached').to.equal(true);
    expect((await blockContact(deps, deviceId, '998877665544@lid', 'block')).ok, 'a LID').to.equal(true);
    expect(await lookups(deps)).to.deep.equal({ looked_up: 1 });
  });

  it("When the holder fails, then its outcome: the contact's not-found code, or no_device for a device not connected", async () => {
    const deps = accountDepsOf(fx);
    const heard = await fx.fakeSender(deviceId, () => ({ ok: false, error: 'not-found' }));
    expect(await getContactProfile(deps, deviceId, '998877665544@lid')).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'not-found',
    });
    await fx.sessions.update(deviceId, 'connecting');
    expect(await blockContact(deps, deviceId, '998877665544@lid', 'block')).to.deep.equal({
      ok: false,
      reason: 'no_device',
    });
    expect(heard).to.have.length(1);
  });

  it('When the blocklist is read, then it comes from Redis with each contact as the device knows them (reconnecting too); no account linked is not_linked', async () => {
    const deps = accountDepsOf(fx);
    const heard = await fx.fakeSender(deviceId, () => ({ ok: true, data: { blocked: true, contact } }));
    await new ContactIdentities(fx.redis).learn(deviceId, [
      { phone: '15557654321', lid: '998877665544@lid' },
    ]);
    await deps.blocklist.replace(deviceId, ['998877665544@lid', '15551230000']);

    const expected = {
      ok: true,
      data: {
        total: 2,
        contacts: [{ phone: '15551230000' }, { phone: '15557654321', lid: '998877665544@lid' }],
      },
    };
    expect(await listBlocklist(deps, deviceId)).to.deep.equal(expected);
    await fx.sessions.update(deviceId, 'connecting');
    expect(await listBlocklist(deps, deviceId)).to.deep.equal(expected);
    await fx.sessions.update(deviceId, 'disconnected');
    expect(await listBlocklist(deps, deviceId)).to.deep.equal({ ok: false, reason: 'not_linked' });
    expect(heard, 'no WhatsApp query').to.deep.equal([]);
  });
});
