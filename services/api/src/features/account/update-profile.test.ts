import { expect } from 'chai';
import type { DeviceCommandReply } from '@mgw/contracts';
import { MemoryHolder, said } from '../test-support.js';
import { profile } from './account-fixture.js';
import { updateProfile } from './update-profile.js';

describe("updateProfile: the account's name and about changed through the holder (an in-memory holder)", () => {
  let mh: MemoryHolder;
  const deps = () => ({ holder: mh.holder });
  const deviceId = 'acc-1';

  beforeEach(() => {
    mh = new MemoryHolder();
  });

  it('When the profile is changed, then each answers the profile the holder gives back, and only the fields given go in the command', async () => {
    const heard = mh.device(deviceId, () => ({ ok: true, data: { profile } }) as DeviceCommandReply);

    expect(await updateProfile(deps(), deviceId, { name: 'Shop' })).to.deep.equal({
      ok: true,
      data: { profile },
    });
    expect(await updateProfile(deps(), deviceId, { about: 'Open 9-5' })).to.deep.equal({
      ok: true,
      data: { profile },
    });
    expect(await updateProfile(deps(), deviceId, { name: 'Shop', about: '' })).to.deep.equal({
      ok: true,
      data: { profile },
    });
    expect(heard.map(said)).to.deep.equal([
      { type: 'account-profile-set', deviceId, name: 'Shop' },
      { type: 'account-profile-set', deviceId, about: 'Open 9-5' },
      { type: 'account-profile-set', deviceId, name: 'Shop', about: '' },
    ]);
  });

  it('When the device is not connected, then no_device and its holder is not asked', async () => {
    const heard = mh.device(deviceId, () => ({ ok: false, error: 'not-connected' }));

    mh.sessions.update(deviceId, 'connecting');
    expect(await updateProfile(deps(), deviceId, { name: 'X' })).to.deep.equal({
      ok: false,
      reason: 'no_device',
    });
    expect(heard).to.have.length(0);
  });
});
