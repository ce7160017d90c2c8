import { expect } from 'chai';
import type { DeviceCommandReply } from '@mgw/contracts';
import { MemoryHolder, said } from '../test-support.js';
import { profile } from './account-fixture.js';
import { getProfile } from './get-profile.js';

describe("getProfile: the account's profile, asked of the holder (an in-memory holder)", () => {
  let mh: MemoryHolder;
  const deps = () => ({ holder: mh.holder });
  const deviceId = 'acc-1';

  beforeEach(() => {
    mh = new MemoryHolder();
  });

  it('When the profile is read, then the answer is the profile the holder gives back, for a command naming nothing else', async () => {
    const heard = mh.device(deviceId, () => ({ ok: true, data: { profile } }) as DeviceCommandReply);

    expect(await getProfile(deps(), deviceId)).to.deep.equal({ ok: true, data: { profile } });
    expect(heard.map(said)).to.deep.equal([{ type: 'account-profile-get', deviceId }]);
  });

  it("When its holder's socket is not open, then not_connected", async () => {
    const heard = mh.device(deviceId, () => ({ ok: false, error: 'not-connected' }));
    expect(await getProfile(deps(), deviceId)).to.deep.equal({ ok: false, reason: 'not_connected' });
    expect(heard).to.have.length(1);
  });

  it('When the holder never answers, then timeout and the profile is not invented', async () => {
    mh.device(deviceId, () => undefined);
    expect(await getProfile(deps(), deviceId)).to.deep.equal({ ok: false, reason: 'timeout' });
  });
});
