import { expect } from 'chai';
import type { DeviceCommandReply } from '@mgw/contracts';
import { MemoryHolder, said } from '../test-support.js';
import { profile } from './account-fixture.js';
import { removePhoto } from './remove-photo.js';

describe("removePhoto: the account's photo removed through the holder (an in-memory holder)", () => {
  let mh: MemoryHolder;
  const deps = () => ({ holder: mh.holder });
  const deviceId = 'acc-1';

  beforeEach(() => {
    mh = new MemoryHolder();
  });

  it('When the photo is removed, then the answer is the profile the holder gives back', async () => {
    const heard = mh.device(deviceId, () => ({ ok: true, data: { profile } }) as DeviceCommandReply);

    expect(await removePhoto(deps(), deviceId)).to.deep.equal({ ok: true, data: { profile } });
    expect(heard.map(said)).to.deep.equal([{ type: 'account-photo-remove', deviceId }]);
  });

  it('When the device is not connected, then no_device and its holder is not asked', async () => {
    const heard = mh.device(deviceId, () => ({ ok: false, error: 'not-connected' }));

    mh.sessions.update(deviceId, 'connecting');
    expect(await removePhoto(deps(), deviceId)).to.deep.equal({ ok: false, reason: 'no_device' });
    expect(heard).to.have.length(0);
  });
});
