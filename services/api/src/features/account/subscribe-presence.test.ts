import { expect } from 'chai';
import type { DeviceCommandReply } from '@mgw/contracts';
import type { ContactAnswer } from '@mgw/store';
import { MemoryHolder, said } from '../test-support.js';
import { contact, contactDeps } from './account-fixture.js';
import { subscribePresence } from './subscribe-presence.js';

describe("subscribePresence: the device subscribes to a contact's presence through the holder (an in-memory holder)", () => {
  let mh: MemoryHolder;
  const deviceId = 'acc-2';
  /** What the device's contact cache knows (the number check keeps its answers there). */
  let cached: Map<string, ContactAnswer>;

  beforeEach(() => {
    mh = new MemoryHolder();
    cached = new Map();
  });

  it('When a contact’s presence is subscribed, then the command names it and the answer is the holder’s', async () => {
    const deps = contactDeps(mh.holder, cached);
    const heard = mh.device(
      deviceId,
      () => ({ ok: true, data: { subscribed: true, contact } }) as DeviceCommandReply,
    );

    expect(await subscribePresence(deps, deviceId, '15551234567')).to.deep.equal({
      ok: true,
      data: { subscribed: true, contact },
    });
    expect(heard.map(said)).to.deep.equal([
      { type: 'account-presence-subscribe', deviceId, address: '15551234567' },
    ]);
  });

  it('When the holder never answers, then timeout', async () => {
    const deps = contactDeps(mh.holder, cached);
    const heard = mh.device(deviceId, () => undefined);
    expect(await subscribePresence(deps, deviceId, '998877665544@lid')).to.deep.equal({
      ok: false,
      reason: 'timeout',
    });
    expect(heard).to.have.length(1);
  });
});
