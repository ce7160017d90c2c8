import { expect } from 'chai';
import type { DeviceCommand, DeviceCommandReply } from '@mgw/contracts';
import type { AccountDeps } from '../../../src/features/account/account-deps.js';
import { getProfile } from '../../../src/features/account/get-profile.js';
import { removePhoto } from '../../../src/features/account/remove-photo.js';
import { setPresence } from '../../../src/features/account/set-presence.js';
import { updateProfile } from '../../../src/features/account/update-profile.js';
import { HolderFixture } from '../../helpers/fake-holder.js';
import { accountDepsOf } from './account-fixture.js';

/** What the command said, without its request id (a fresh one each time). */
const said = ({ requestId: _r, ...rest }: DeviceCommand) => rest;

describe("The account's profile and presence: the use cases ask the holder (real Redis, a fake sender)", () => {
  const fx = new HolderFixture('account-profile-test');
  let deps: AccountDeps;
  let deviceId: string;
  const profile = { phone: '15550001111', name: 'Shop', about: 'Open 9-5' };

  beforeEach(async () => {
    fx.setUp();
    deps = accountDepsOf(fx);
    deviceId = fx.freshDevice('ap');
    await fx.connect(deviceId);
  });
  afterEach(() => fx.tearDown());

  it('When the profile is read, changed or its photo removed, then each answers the profile the holder gives back', async () => {
    const heard = await fx.fakeSender(
      deviceId,
      () => ({ ok: true, data: { profile } }) as DeviceCommandReply,
    );

    expect(await getProfile(deps, deviceId)).to.deep.equal({ ok: true, data: { profile } });
    expect(await updateProfile(deps, deviceId, { name: 'Shop' })).to.deep.equal({
      ok: true,
      data: { profile },
    });
    expect(await updateProfile(deps, deviceId, { about: 'Open 9-5' })).to.deep.equal({
      ok: true,
      data: { profile },
    });
    expect(await updateProfile(deps, deviceId, { name: 'Shop', about: '' })).to.deep.equal({
      ok: true,
      data: { profile },
    });
    expect(await removePhoto(deps, deviceId)).to.deep.equal({ ok: true, data: { profile } });
    // Only the fields given go in the command: an absent one is left as it is.
    expect(heard.map(said)).to.deep.equal([
      { type: 'account-profile-get', deviceId },
      { type: 'account-profile-set', deviceId, name: 'Shop' },
      { type: 'account-profile-set', deviceId, about: 'Open 9-5' },
      { type: 'account-profile-set', deviceId, name: 'Shop', about: '' },
      { type: 'account-photo-remove', deviceId },
    ]);
  });

  it('When the presence is set, then the answer is what the holder said; a nameless account is its no-name code', async () => {
    const answers: DeviceCommandReply[] = [
      { ok: true, data: { presence: 'available' } } as DeviceCommandReply,
      { ok: false, error: 'no-name' },
    ];
    const heard = await fx.fakeSender(deviceId, () => answers.shift());

    expect(await setPresence(deps, deviceId, 'available')).to.deep.equal({
      ok: true,
      data: { presence: 'available' },
    });
    expect(await setPresence(deps, deviceId, 'unavailable')).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'no-name',
    });
    expect(heard.map(said)).to.deep.equal([
      { type: 'account-presence-set', deviceId, presence: 'available' },
      { type: 'account-presence-set', deviceId, presence: 'unavailable' },
    ]);
  });

  it("When the device is not connected, or its holder's socket is not open, then no_device (not asked) and not_connected", async () => {
    const heard = await fx.fakeSender(deviceId, () => ({ ok: false, error: 'not-connected' }));
    expect(await getProfile(deps, deviceId)).to.deep.equal({ ok: false, reason: 'not_connected' });

    await fx.sessions.update(deviceId, 'connecting');
    expect(await updateProfile(deps, deviceId, { name: 'X' })).to.deep.equal({
      ok: false,
      reason: 'no_device',
    });
    expect(await removePhoto(deps, deviceId)).to.deep.equal({ ok: false, reason: 'no_device' });
    expect(heard).to.have.length(1);
  });
});
