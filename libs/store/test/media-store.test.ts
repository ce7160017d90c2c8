import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys, type MediaObject } from '@mgw/contracts';
import { startS3Server, waitFor, type S3ServerHandle } from '@mgw/testing';
import {
  Encryption,
  MediaStore,
  MediaStoreUnavailableError,
  isQuotaRefusal,
  mediaConfig,
  type MediaConfig,
  type MediaQuotaRefusal,
} from '../src/index.js';

/**
 * The media store against a real Redis and a real S3-protocol server (s3rver on a free port):
 * put, pre-signed URLs that fetch the bytes and expire, delete, the retention sweep, the quota,
 * one device never reading another's object, and the S3 server gone in the middle of an upload.
 */
describe('store: the media store (real Redis, real S3 server)', function () {
  this.timeout(30_000);
  let redis: Redis;
  let s3: S3ServerHandle;
  const encryption = Encryption.fromEnv();
  const device = () => `media-${Math.random().toString(36).slice(2, 8)}`;

  before(async () => {
    redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    s3 = await startS3Server();
  });
  after(async () => {
    await redis.quit();
    await s3?.stop();
  });

  const config = (env: Record<string, string | number> = {}): MediaConfig =>
    mediaConfig({
      MEDIA_RETENTION_SECONDS: 3600,
      MEDIA_URL_TTL_SECONDS: 3600,
      MEDIA_DEVICE_MAX_OBJECTS: 100,
      MEDIA_SWEEP_INTERVAL_MS: 1000,
      MEDIA_S3_REGION: 'us-east-1',
      MEDIA_S3_SSE: 'AES256',
      MEDIA_S3_TIMEOUT_MS: 5000,
      ...env,
    });
  const s3Store = (env: Record<string, string | number> = {}) =>
    new MediaStore(redis, encryption, config({ ...s3.env, ...env }));
  const put = async (store: MediaStore, deviceId: string, bytes: Buffer) => {
    const out = await store.put(deviceId, {
      bytes,
      mimeType: 'image/png',
      fileName: 'a.png',
      source: 'upload',
    });
    if (isQuotaRefusal(out)) throw new Error('refused');
    return out;
  };

  it('When an object is put in S3, then its pre-signed URL fetches the same bytes, asked with SSE', async () => {
    const store = s3Store();
    const deviceId = device();
    const bytes = randomBytes(200_000);
    const obj = await put(store, deviceId, bytes);
    expect(obj.store).to.equal('s3');
    const shown = (await store.show(deviceId, obj.mediaId))!;
    expect(shown.url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/mgw-media\/\d{11}\/media-/);
    const res = await fetch(shown.url!);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('image/png');
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).to.equal(true);
    // Every put asked the server to encrypt the object at rest.
    const puts = s3.requests.filter((r) => r.method === 'PUT' && r.path.includes(obj.mediaId));
    expect(puts).to.have.length(1);
    expect(puts[0]!.headers['x-amz-server-side-encryption']).to.equal('AES256');
    // No credential in what the store hands out.
    expect(shown.url).not.to.include('S3RVER/');
    expect((await store.bytes(deviceId, obj.mediaId))!.equals(bytes)).to.equal(true);
  });

  it('When another device asks for an object, then it is not found (its id alone reaches nothing)', async () => {
    const store = s3Store();
    const owner = device();
    const obj = await put(store, owner, randomBytes(100));
    expect(await store.show(device(), obj.mediaId)).to.equal(undefined);
    expect(await store.bytes(device(), obj.mediaId)).to.equal(undefined);
    expect(await store.delete(device(), obj.mediaId)).to.equal(false);
    expect(await store.show(owner, obj.mediaId)).to.not.equal(undefined);
  });

  it('When a pre-signed URL outlives its lifetime, then S3 refuses it', async () => {
    const store = s3Store({ MEDIA_URL_TTL_SECONDS: 1 });
    const deviceId = device();
    const obj = await put(store, deviceId, randomBytes(1000));
    const shown = (await store.show(deviceId, obj.mediaId))!;
    expect((await fetch(shown.url!)).status).to.equal(200);
    // Refused once its second is over: waited for (S3's clock has whole seconds), not slept.
    let late!: Response;
    await waitFor(async () => (late = await fetch(shown.url!)).status !== 200, {
      intervalMs: 250,
      timeoutMs: 15_000,
      what: 'the URL to expire',
    });
    console.log(`      expired URL answered ${late.status}`);
    expect(late.status).to.equal(403);
    expect(await late.text()).to.include('Request has expired');
  });

  it('When an object passes its retention, then the sweep deletes it from the bucket and its id is gone', async () => {
    const store = s3Store({ MEDIA_RETENTION_SECONDS: 2 });
    const deviceId = device();
    const obj = await put(store, deviceId, randomBytes(1000));
    const early = (await store.show(deviceId, obj.mediaId))!;
    // A URL never outlives its object: at most the retention left.
    expect(Date.parse(early.urlExpiresAt!)).to.be.at.most(Date.parse(obj.expiresAt) + 1000);
    // Past its 2 s retention: waited for, not slept.
    await waitFor(async () => (await store.show(deviceId, obj.mediaId)) === undefined, {
      intervalMs: 250,
      timeoutMs: 15_000,
      what: 'the object to pass its retention',
    });
    // The sweep takes whole seconds past the expiry: it deletes it once that second is over.
    let swept = 0;
    await waitFor(async () => (swept += await store.sweep()) >= 1, {
      intervalMs: 250,
      timeoutMs: 15_000,
      what: 'the sweep to delete it',
    });
    expect(swept).to.be.at.least(1);
    // Gone from the bucket itself: a URL signed for its key (with the credentials) finds nothing.
    const longer = s3Store({ MEDIA_RETENTION_SECONDS: 3600 });
    const url = await (
      await longer.backend()
    ).presign({ deviceId, mediaId: obj.mediaId, expiresAtMs: Date.parse(obj.expiresAt) }, 60, {
      mimeType: 'image/png',
    });
    expect((await fetch(url!)).status).to.equal(404);
  });

  it('When the S3 server goes away in the middle of an upload, then the put fails with a reason and nothing is named', async () => {
    const store = s3Store({ MEDIA_S3_TIMEOUT_MS: 2000 });
    const deviceId = device();
    const killed = s3.killDuringNextUpload(256 * 1024);
    const started = Date.now();
    let failure: unknown;
    try {
      await put(store, deviceId, randomBytes(5 * 1024 * 1024));
    } catch (err) {
      failure = err;
    }
    await killed;
    console.log(`      upload failed after ${Date.now() - started} ms: ${(failure as Error)?.message}`);
    expect(failure).to.be.instanceOf(MediaStoreUnavailableError);
    expect((failure as Error).message).to.match(/^media put failed|^S3 put failed/);
    // No record names it, and the quota holds nothing for it.
    expect(await redis.zcard(keys.mediaExpiries(deviceId))).to.equal(0);
    expect(await redis.keys(keys.media(deviceId, '*'))).to.deep.equal([]);
    await s3.restart();
    const obj = await put(store, deviceId, randomBytes(1000));
    expect((await store.bytes(deviceId, obj.mediaId))!.length).to.equal(1000);
  });

  it('When a device is over its media quota, then the put is refused, and a delete gives the room back', async () => {
    const store = s3Store({ MEDIA_DEVICE_MAX_BYTES: 2500 });
    const deviceId = device();
    const first = await put(store, deviceId, randomBytes(1500));
    const refused = (await store.put(deviceId, {
      bytes: randomBytes(1500),
      mimeType: 'image/png',
      source: 'upload',
    })) as MediaQuotaRefusal;
    expect(refused.refused).to.equal('quota_full');
    expect(refused.stored).to.deep.equal({ bytes: 1500, objects: 1 });
    expect(await store.delete(deviceId, first.mediaId)).to.equal(true);
    expect(await store.show(deviceId, first.mediaId)).to.equal(undefined);
    await put(store, deviceId, randomBytes(1500));
  });

  it('When there is no MEDIA_STORE, then the bytes are sealed in Redis with a TTL, and there is no URL', async () => {
    const store = new MediaStore(redis, encryption, config());
    const deviceId = device();
    const bytes = Buffer.from('a very recognisable attachment body '.repeat(20));
    const obj: MediaObject = await put(store, deviceId, bytes);
    expect(obj.store).to.equal('redis');
    const raw = (await redis.getBuffer(keys.mediaBlob(deviceId, obj.mediaId)))!;
    expect(raw.includes(Buffer.from('recognisable'))).to.equal(false);
    const ttl = await redis.pttl(keys.mediaBlob(deviceId, obj.mediaId));
    expect(ttl).to.be.within(3_590_000, 3_600_000);
    expect((await store.show(deviceId, obj.mediaId))!.url).to.equal(undefined);
    expect((await store.bytes(deviceId, obj.mediaId))!.equals(bytes)).to.equal(true);
    expect(await store.delete(deviceId, obj.mediaId)).to.equal(true);
    expect(await redis.exists(keys.mediaBlob(deviceId, obj.mediaId))).to.equal(0);
  });
});
