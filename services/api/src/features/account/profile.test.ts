import { expect } from 'chai';
import { PROFILE_LIMITS, keys, type DeviceCommand, type DeviceCommandReply } from '@mgw/contracts';
import { Encryption, storageContext } from '@mgw/store';
import { MemoryHolder, said } from '../test-support.js';
import { askAccount, askProfile, type AccountRedis } from './account-deps.js';
import { getProfile } from './get-profile.js';
import { readPresence } from './read-presence.js';
import { removePhoto } from './remove-photo.js';
import { PHOTO_HANDOFF_SECONDS, setPhoto } from './set-photo.js';
import { setPresence } from './set-presence.js';
import { updateProfile } from './update-profile.js';

/** The Redis the account's use cases write themselves: hashes and expiring values, in memory. */
class MemoryRedis implements AccountRedis {
  readonly hashes = new Map<string, Record<string, string>>();
  readonly values = new Map<string, { value: Buffer; ttl: number }>();
  async hmget(key: string, ...fields: string[]) {
    const h = this.hashes.get(key) ?? {};
    return fields.map((f) => h[f] ?? null);
  }
  async hset(key: string, values: Record<string, string>) {
    const h = this.hashes.get(key) ?? {};
    const added = Object.keys(values).filter((f) => !(f in h)).length;
    this.hashes.set(key, { ...h, ...values });
    return added;
  }
  async set(key: string, value: Buffer, _expiry: 'EX', seconds: number) {
    this.values.set(key, { value, ttl: seconds });
    return 'OK';
  }
  async del(key: string) {
    return Number(this.values.delete(key) || this.hashes.delete(key));
  }
}

type PhotoSet = Extract<DeviceCommand, { type: 'account-photo-set' }>;

describe("The account's profile, photo and presence: the use cases ask the holder (an in-memory holder)", () => {
  let mh: MemoryHolder;
  let redis: MemoryRedis;
  const encryption = Encryption.fromEnv();
  const deps = () => ({ holder: mh.holder, redis, encryption });
  const deviceId = 'acc-1';
  const profile = { phone: '15550001111', name: 'Shop', about: 'Open 9-5' };
  const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(64, 7)]);

  beforeEach(() => {
    mh = new MemoryHolder();
    redis = new MemoryRedis();
  });

  it('When the profile is read, changed or its photo removed, then each answers the profile the holder gives back, and only the fields given go in the command', async () => {
    const heard = mh.device(deviceId, () => ({ ok: true, data: { profile } }) as DeviceCommandReply);

    expect(await getProfile(deps(), deviceId)).to.deep.equal({ ok: true, data: { profile } });
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
    expect(await removePhoto(deps(), deviceId)).to.deep.equal({ ok: true, data: { profile } });
    expect(heard.map(said)).to.deep.equal([
      { type: 'account-profile-get', deviceId },
      { type: 'account-profile-set', deviceId, name: 'Shop' },
      { type: 'account-profile-set', deviceId, about: 'Open 9-5' },
      { type: 'account-profile-set', deviceId, name: 'Shop', about: '' },
      { type: 'account-photo-remove', deviceId },
    ]);
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

  it("When the device is not connected, or its holder's socket is not open, then no_device (not asked) and not_connected", async () => {
    const heard = mh.device(deviceId, () => ({ ok: false, error: 'not-connected' }));
    expect(await getProfile(deps(), deviceId)).to.deep.equal({ ok: false, reason: 'not_connected' });

    mh.sessions.update(deviceId, 'connecting');
    expect(await updateProfile(deps(), deviceId, { name: 'X' })).to.deep.equal({
      ok: false,
      reason: 'no_device',
    });
    expect(await removePhoto(deps(), deviceId)).to.deep.equal({ ok: false, reason: 'no_device' });
    expect(heard).to.have.length(1);
  });

  it('When the holder never answers, then timeout and the profile is not invented', async () => {
    mh.device(deviceId, () => undefined);
    expect(await getProfile(deps(), deviceId)).to.deep.equal({ ok: false, reason: 'timeout' });
  });

  it('When the presence is set, then the answer is the holder’s and the session record keeps it with when; a nameless account is its no-name code and nothing is kept', async () => {
    const answers: DeviceCommandReply[] = [
      { ok: true, data: { presence: 'available' } } as DeviceCommandReply,
      { ok: false, error: 'no-name' },
    ];
    const heard = mh.device(deviceId, () => answers.shift());

    expect(await setPresence(deps(), deviceId, 'available')).to.deep.equal({
      ok: true,
      data: { presence: 'available' },
    });
    const kept = redis.hashes.get(keys.session(deviceId))!;
    expect(kept.presence).to.equal('available');
    expect(Date.now() - Date.parse(kept.presenceSetAt!)).to.be.within(0, 5000);

    expect(await setPresence(deps(), deviceId, 'unavailable')).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'no-name',
    });
    expect(redis.hashes.get(keys.session(deviceId))!.presence, 'unchanged').to.equal('available');
    expect(heard.map(said)).to.deep.equal([
      { type: 'account-presence-set', deviceId, presence: 'available' },
      { type: 'account-presence-set', deviceId, presence: 'unavailable' },
    ]);
  });

  it('When the presence is read, then what PUT /presence set during the current connection; otherwise (set before it, no connection, nothing set) unavailable', async () => {
    const key = keys.session(deviceId);
    redis.hashes.set(key, {
      status: 'connected',
      connectedAt: '2026-01-01T10:00:00.000Z',
      presence: 'available',
      presenceSetAt: '2026-01-01T10:05:00.000Z',
    });
    expect(await readPresence({ redis }, deviceId)).to.deep.equal({
      presence: 'available',
      setAt: '2026-01-01T10:05:00.000Z',
    });
    // A reconnection since: the account is connected offline again.
    redis.hashes.get(key)!.connectedAt = '2026-01-01T11:00:00.000Z';
    expect(await readPresence({ redis }, deviceId)).to.deep.equal({ presence: 'unavailable' });
    redis.hashes.get(key)!.connectedAt = '2026-01-01T09:00:00.000Z';
    redis.hashes.get(key)!.status = 'connecting';
    expect(await readPresence({ redis }, deviceId)).to.deep.equal({ presence: 'unavailable' });
    expect(await readPresence({ redis }, 'never-linked')).to.deep.equal({ presence: 'unavailable' });
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
