import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { CLOUD_WINDOW_MS, keys, type CloudDeviceInput } from '@mgw/contracts';
import { CloudDeviceStore, CloudNumberTakenError, Encryption, EncryptionKey } from '@mgw/store';

describe('cloud devices: sealed configuration and the webhook indexes (real Redis)', function () {
  this.timeout(30_000);
  let redis: Redis;
  let store: CloudDeviceStore;
  const encryption = Encryption.fromConfig({ current: new EncryptionKey('k1', randomBytes(32)), old: [] });
  // The suite's Redis is shared: ids of this run only.
  const run = `${process.pid}${Date.now() % 100000}`;
  const shop = `cloud-shop-${run}`;
  const other = `cloud-other-${run}`;
  const input = (n: string, over: Partial<CloudDeviceInput> = {}): CloudDeviceInput => ({
    phoneNumberId: `9${run}${n}`,
    wabaId: `8${run}`,
    accessToken: `EAAG-secret-access-${run}`,
    appSecret: `app-secret-${run}`,
    verifyToken: `verify-${run}-${n}`,
    ...over,
  });
  const sha = (t: string) => createHash('sha256').update(t).digest('hex');

  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
    store = new CloudDeviceStore(redis, encryption);
  });
  after(async () => {
    await store.forget(shop);
    await store.forget(other);
    await redis.quit();
  });

  it('When a device is configured, then it is cloud, its secrets are sealed and it is found by number and verify token', async () => {
    expect(await store.engineOf(shop)).to.equal('linked');
    const config = await store.set(shop, input('1'), new Date('2026-11-30T00:00:00Z'));
    expect(config).to.include({
      throughputPerSecond: 80,
      graphVersion: 'v21.0',
      otpTemplate: 'verification_code',
    });
    expect(await store.engineOf(shop)).to.equal('cloud');
    expect(await store.get(shop)).to.deep.equal(config);
    const raw = (await redis.get(keys.cloudDevice(shop)))!;
    for (const secret of [config.accessToken, config.appSecret, config.verifyToken])
      expect(raw).not.to.contain(secret);
    expect(await store.deviceOfNumber(config.phoneNumberId)).to.equal(shop);
    expect(await store.devicesOfVerifyToken(config.verifyToken)).to.deep.equal([shop]);
    expect(await redis.exists(keys.cloudVerifyToken(sha(config.verifyToken)))).to.equal(1);
  });

  it('When another device claims the same number, then it is refused and the first keeps it', async () => {
    const err = await store.set(other, input('1')).catch((e) => e);
    expect(err).to.be.instanceOf(CloudNumberTakenError);
    expect(await store.engineOf(other)).to.equal('linked');
    expect(await store.deviceOfNumber(input('1').phoneNumberId)).to.equal(shop);
  });

  it('When a device moves to another number and token, then the old index entries go and the new ones route', async () => {
    await store.set(shop, input('2'));
    expect(await store.deviceOfNumber(input('1').phoneNumberId)).to.equal(undefined);
    expect(await store.devicesOfVerifyToken(input('1').verifyToken)).to.deep.equal([]);
    expect(await store.deviceOfNumber(input('2').phoneNumberId)).to.equal(shop);
    // The freed number may be another device's now.
    await store.set(other, input('1'));
    expect(await store.deviceOfNumber(input('1').phoneNumberId)).to.equal(other);
  });

  it('When an index entry names a device that no longer holds that number (a crash), then it routes nowhere and is taken over', async () => {
    await redis.hset(keys.cloudNumbers(), input('3').phoneNumberId, `gone-${run}`);
    expect(await store.deviceOfNumber(input('3').phoneNumberId)).to.equal(undefined);
    await store.set(other, input('3'));
    expect(await store.deviceOfNumber(input('3').phoneNumberId)).to.equal(other);
  });

  it('When the device is forgotten, then it is linked again and nothing of it is left', async () => {
    await store.setState(shop, { status: 'connected', at: '2026-11-30T00:00:00.000Z' });
    await store.keepProfile(shop, {
      displayPhoneNumber: '+1 555',
      verifiedName: 'Shop',
      qualityRating: 'GREEN',
      checkedAt: '2026-11-30T00:00:00.000Z',
    });
    expect(await store.forget(shop)).to.equal(true);
    expect(await store.forget(shop)).to.equal(false);
    expect(await store.engineOf(shop)).to.equal('linked');
    expect(await store.state(shop)).to.equal(undefined);
    expect(await store.profile(shop)).to.equal(undefined);
    expect(await store.deviceOfNumber(input('2').phoneNumberId)).to.equal(undefined);
    expect(await store.devicesOfVerifyToken(input('2').verifyToken)).to.deep.equal([]);
  });
  it('When contacts write, then each window keeps their latest message, never one ahead of now, and closed ones go', async () => {
    const device = `cloud-windows-${run}`;
    const now = Date.now();
    await store.keepWindow(device, '15550000001', now - 1000, now);
    await store.keepWindow(device, '15550000001', now - 5000, now);
    await store.keepWindow(device, '15550000002', now + 60_000, now);
    await store.keepWindow(device, '15550000003', now - CLOUD_WINDOW_MS - 1, now - 2);
    await store.keepWindow(device, '15550000004', now - 10, now);
    const key = keys.cloudWindows(device);
    expect(await redis.zrange(key, 0, -1, 'WITHSCORES')).to.deep.equal([
      '15550000001',
      String(now - 1000),
      '15550000004',
      String(now - 10),
      '15550000002',
      String(now),
    ]);
    expect(await redis.pttl(key)).to.be.within(1, CLOUD_WINDOW_MS);
    await redis.del(key);
  });
});
