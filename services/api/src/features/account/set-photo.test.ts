import { expect } from 'chai';
import { PROFILE_LIMITS, keys, type DeviceCommand, type DeviceCommandReply } from '@mgw/contracts';
import { Encryption, storageContext } from '@mgw/store';
import { MemoryHolder, said } from '../test-support.js';
import { MemoryAccountRedis, png, profile } from './account-fixture.js';
import { PHOTO_HANDOFF_SECONDS, setPhoto } from './set-photo.js';

type PhotoSet = Extract<DeviceCommand, { type: 'account-photo-set' }>;

describe("setPhoto: the account's photo from a URL or from bytes handed over sealed (an in-memory holder and Redis)", () => {
  let mh: MemoryHolder;
  let redis: MemoryAccountRedis;
  const encryption = Encryption.fromEnv();
  const deps = () => ({ holder: mh.holder, redis, encryption });
  const deviceId = 'acc-1';

  beforeEach(() => {
    mh = new MemoryHolder();
    redis = new MemoryAccountRedis();
  });

  it('When the photo is a URL, then the holder is asked to fetch it, and its answer is the profile', async () => {
    const heard = mh.device(deviceId, () => ({ ok: true, data: { profile } }) as DeviceCommandReply);
    expect(await setPhoto(deps(), deviceId, { url: 'https://example.com/a.png' })).to.deep.equal({
      ok: true,
      data: { profile },
    });
    expect(heard.map(said)).to.deep.equal([
      { type: 'account-photo-set', deviceId, source: { url: 'https://example.com/a.png' } },
    ]);
    expect(redis.values.size).to.equal(0);
  });

  it('When the photo is base64, then the holder finds the bytes sealed under the command id while it works, and the key is gone after', async () => {
    let found: { bytes?: Buffer; ttl?: number } = {};
    const heard = mh.device(deviceId, (cmd) => {
      const key = keys.profilePhoto(deviceId, cmd.requestId);
      const stored = redis.values.get(key);
      found = stored
        ? { bytes: encryption.open(stored.value, storageContext(key, 'photo')), ttl: stored.ttl }
        : {};
      return { ok: true, data: { profile } } as DeviceCommandReply;
    });

    expect(await setPhoto(deps(), deviceId, { base64: png.toString('base64') })).to.deep.equal({
      ok: true,
      data: { profile },
    });
    expect((heard[0] as PhotoSet).source).to.deep.equal({ stored: true });
    expect(found.bytes?.equals(png), 'the same bytes, opened').to.equal(true);
    expect(found.ttl).to.equal(PHOTO_HANDOFF_SECONDS);
    expect(redis.values.size, 'taken away').to.equal(0);
  });

  it('When the bytes are too large or no image, then photo_too_large or photo_not_image and nothing is asked or stored', async () => {
    const heard = mh.device(deviceId, () => ({ ok: true, data: { profile } }) as DeviceCommandReply);
    const big = Buffer.concat([png, Buffer.alloc(PROFILE_LIMITS.photoBytes)]);
    expect(await setPhoto(deps(), deviceId, { base64: big.toString('base64') })).to.deep.equal({
      ok: false,
      reason: 'photo_too_large',
    });
    expect(
      await setPhoto(deps(), deviceId, { base64: Buffer.from('GIF89a…').toString('base64') }),
    ).to.deep.equal({ ok: false, reason: 'photo_not_image' });
    expect(heard).to.deep.equal([]);
    expect(redis.values.size).to.equal(0);
  });

  it("When the device is not connected, then no_device and the bytes are never put; the holder's refusal comes back with its code and the key is gone", async () => {
    const puts: string[] = [];
    const set = redis.set.bind(redis);
    redis.set = (key, value, expiry, seconds) => (puts.push(key), set(key, value, expiry, seconds));
    const heard = mh.device(deviceId, () => ({ ok: false, error: 'photo-too-large' }));
    expect(await setPhoto(deps(), deviceId, { base64: png.toString('base64') })).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'photo-too-large',
    });
    expect(puts).to.have.length(1);
    expect(redis.values.size).to.equal(0);

    mh.sessions.update(deviceId, 'connecting');
    expect(await setPhoto(deps(), deviceId, { base64: png.toString('base64') })).to.deep.equal({
      ok: false,
      reason: 'no_device',
    });
    expect(heard).to.have.length(1);
    expect(puts, 'never put for a device not connected').to.have.length(1);
  });
});
