import { expect } from 'chai';
import type { DeviceCommandReply } from '@mgw/contracts';
import type { ContactAnswer } from '@mgw/store';
import { MemoryHolder, said } from '../test-support.js';
import { contact, contactDeps } from './account-fixture.js';
import { getContactProfile } from './get-contact-profile.js';

describe("getContactProfile: another person's profile, asked of the holder (an in-memory holder)", () => {
  let mh: MemoryHolder;
  const deviceId = 'acc-2';
  /** What the device's contact cache knows (the number check keeps its answers there). */
  let cached: Map<string, ContactAnswer>;

  beforeEach(() => {
    mh = new MemoryHolder();
    cached = new Map();
  });

  it('When a contact’s profile is read, then the command names it and the answer is the profile the holder gives', async () => {
    const deps = contactDeps(mh.holder, cached);
    const heard = mh.device(
      deviceId,
      () => ({ ok: true, data: { contactProfile: { contact, about: 'Hi' } } }) as DeviceCommandReply,
    );

    expect(await getContactProfile(deps, deviceId, '15551234567')).to.deep.equal({
      ok: true,
      data: { profile: { contact, about: 'Hi' } },
    });
    expect(heard.map(said)).to.deep.equal([
      { type: 'account-contact-profile', deviceId, address: '15551234567' },
    ]);
  });

  it("When the holder fails, then its outcome: the contact's not-found code", async () => {
    const deps = contactDeps(mh.holder, cached);
    const heard = mh.device(deviceId, () => ({ ok: false, error: 'not-found' }));
    expect(await getContactProfile(deps, deviceId, '998877665544@lid')).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'not-found',
    });
    expect(heard).to.have.length(1);
  });
});
