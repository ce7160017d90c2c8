import { expect } from 'chai';
import type { DeviceCommandReply } from '@mgw/contracts';
import { MemoryHolder } from '../test-support.js';
import { askAccount, askProfile } from './account-deps.js';
import { profile } from './account-fixture.js';

describe('askAccount, askProfile: an account command asked of the holder (an in-memory holder)', () => {
  let mh: MemoryHolder;
  const deps = () => ({ holder: mh.holder });
  const deviceId = 'acc-1';

  beforeEach(() => {
    mh = new MemoryHolder();
  });

  it('When askProfile gets a reply carrying more than the profile, then only the profile is answered; askAccount answers the reply as it is', async () => {
    mh.device(deviceId, () => ({ ok: true, data: { profile, extra: 1 } }) as DeviceCommandReply);
    expect(await askProfile(deps(), deviceId, { type: 'account-profile-get' })).to.deep.equal({
      ok: true,
      data: { profile },
    });
    expect(await askAccount(deps(), deviceId, { type: 'account-profile-get' })).to.deep.equal({
      ok: true,
      data: { profile, extra: 1 },
    });
  });
});
