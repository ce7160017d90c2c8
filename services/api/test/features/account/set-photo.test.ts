import { expect } from 'chai';
import { PROFILE_LIMITS, keys, type DeviceCommand, type DeviceCommandReply } from '@mgw/contracts';
import { storageContext } from '@mgw/store';
import type { AccountDeps } from '../../../src/features/account/account-deps.js';
import { PHOTO_HANDOFF_SECONDS, setPhoto } from '../../../src/features/account/set-photo.js';
import { HolderFixture } from '../../helpers/fake-holder.js';
import { accountDepsOf } from './account-fixture.js';

type PhotoSet = Extract<DeviceCommand, { type: 'account-photo-set' }>;

describe('setPhoto: a URL goes in the command, base64 bytes are checked and handed over sealed (real Redis, a fake sender)', () => {
  const fx = new HolderFixture('set-photo-test');
  let deps: AccountDeps;
  let deviceId: string;
  const profile = { phone: '15550001111', pictureUrl: 'https://x.test/p.jpg' };
  const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(64, 7)]);

  beforeEach(async () => {
    fx.setUp();
    deps = accountDepsOf(fx);
    deviceId = fx.freshDevice('sp');
    await fx.connect(deviceId);
  });
  afterEach(() => fx.tearDown());

  it('When the photo is a URL, then the holder is asked to fetch it, and its answer is the profile', async () => {
    const heard = await fx.fakeSender(
      deviceId,
      () => ({ ok: true, data: { profile } }) as DeviceCommandReply,
    );
    expect(await setPhoto(deps, deviceId, { url: 'https://example.com/a.png' })).to.deep.equal({
      ok: true,
      data: { profile },
    });
    expect(heard.map(({ requestId: _r, ...c }) => c)).to.deep.equal([
      { type: 'account-photo-set', deviceId, source: { url: 'https://example.com/a.png' } },
    ]);
  });

  it('When the photo is base64, then the holder finds the bytes sealed under the command id while it works, and the key is gone after', async () => {
    let found: { bytes?: Buffer; ttl?: number } = {};
    const heard = await fx.fakeSender(deviceId, async (cmd) => {
      const key = keys.profilePhoto(deviceId, cmd.requestId);
      const sealed = await fx.redis.getBuffer(key);
      found = {
        ...(sealed ? { bytes: deps.encryption.open(sealed, storageContext(key, 'photo')) } : {}),
        ttl: await fx.redis.ttl(key),
      };
      return { ok: true, data: { profile } } as DeviceCommandReply;
    });

    expect(await setPhoto(deps, deviceId, { base64: png.toString('base64') })).to.deep.equal({
      ok: true,
      data: { profile },
    });
    const cmd = heard[0] as PhotoSet;
    expect(cmd.source).to.deep.equal({ stored: true });
    expect(found.bytes?.equals(png), 'the same bytes, opened').to.equal(true);
    expect(found.ttl).to.be.within(1, PHOTO_HANDOFF_SECONDS);
    expect(await fx.redis.exists(keys.profilePhoto(deviceId, cmd.requestId))).to.equal(0);
  });

  it('When the bytes are too large or no image, then photo_too_large or photo_not_image and nothing is asked or stored', async () => {
    const heard = await fx.fakeSender(
      deviceId,
      () => ({ ok: true, data: { profile } }) as DeviceCommandReply,
    );
    const big = Buffer.concat([png, Buffer.alloc(PROFILE_LIMITS.photoBytes)]);
    expect(await setPhoto(deps, deviceId, { base64: big.toString('base64') })).to.deep.equal({
      ok: false,
      reason: 'photo_too_large',
    });
    expect(
      await setPhoto(deps, deviceId, { base64: Buffer.from('GIF89a…').toString('base64') }),
    ).to.deep.equal({
      ok: false,
      reason: 'photo_not_image',
    });
    expect(heard).to.deep.equal([]);
    expect(await fx.redis.keys(keys.profilePhoto(deviceId, '*'))).to.deep.equal([]);
  });

  it("When the device is not connected, then no_device and the bytes are never put; the holder's refusal comes back with its code and the key is gone", async () => {
    const heard = await fx.fakeSender(deviceId, () => ({ ok: false, error: 'photo-too-large' }));
    expect(await setPhoto(deps, deviceId, { base64: png.toString('base64') })).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'photo-too-large',
    });
    expect(heard).to.have.length(1);

    await fx.sessions.update(deviceId, 'connecting');
    expect(await setPhoto(deps, deviceId, { base64: png.toString('base64') })).to.deep.equal({
      ok: false,
      reason: 'no_device',
    });
    expect(heard).to.have.length(1);
    expect(await fx.redis.keys(keys.profilePhoto(deviceId, '*'))).to.deep.equal([]);
  });
});
