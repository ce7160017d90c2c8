import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Job } from 'bullmq';
import { ERRORS, keys, type SendJobData } from '@mgw/contracts';
import { ContentStore, Encryption, PoolStore, markLinked, mediaConfig } from '@mgw/store';
import { startS3Server, type S3ServerHandle } from '@mgw/testing';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
} from '../../../../test/helpers/api.js';

/**
 * POST /media, GET/DELETE /media/:id, GET/PUT /media/settings and sends by `attachment.mediaId`,
 * against the real app and Redis; with MEDIA_STORE, against a real S3-protocol server (s3rver).
 * Every answer is checked against the OpenAPI document (helpers/api.ts).
 */
describe('media objects: POST /media, GET/DELETE /media/:id, sends by mediaId', function () {
  this.timeout(30_000);

  const upload = (
    t: TestApi,
    token: string,
    bytes: Buffer,
    type = 'image/png',
    query = '?filename=cat.png',
  ) => call(`${t.api}/media${query}`, { token, body: bytes, headers: { 'content-type': type } });

  describe('without MEDIA_STORE (Redis)', () => {
    let t: TestApi;
    let deviceId: string;
    let token: string;
    before(async () => (t = await startApi({ maxRecipients: 1000 })));
    beforeEach(async () => {
      deviceId = freshDeviceId();
      token = await createToken(t, { deviceId });
      await markConnected(t.redis, deviceId);
      await markLinked(t.redis, deviceId);
    });
    after(async () => t.close());

    it('When a file is uploaded, then 201 with its id and record, sealed in Redis, and GET answers it without a URL', async () => {
      const bytes = randomBytes(50_000);
      const res = await upload(t, token, bytes);
      expect(res.status).to.equal(201);
      const data = res.body.data as Record<string, unknown>;
      expect(data).to.include({ deviceId, size: bytes.length, mimeType: 'image/png', fileName: 'cat.png' });
      expect(data).to.include({ source: 'upload', store: 'redis' });
      expect(data.sha256).to.equal(createHash('sha256').update(bytes).digest('hex'));
      expect(data.mediaId).to.match(/^med_[A-Za-z0-9_-]{22}$/);
      expect(data).to.not.have.property('url');
      const got = await call(`${t.api}/media/${String(data.mediaId)}`, { token });
      expect(got.status).to.equal(200);
      expect(got.body.data).to.deep.equal(data);
      expect(await t.redis.pttl(keys.mediaBlob(deviceId, String(data.mediaId)))).to.be.greaterThan(0);
    });

    it("When another device's token names the media, then 404 on GET, DELETE and in a send; a pool token gets 403", async () => {
      const mediaId = String(
        ((await upload(t, token, randomBytes(100))).body.data as { mediaId: string }).mediaId,
      );
      const other = freshDeviceId();
      const otherToken = await createToken(t, { deviceId: other });
      await markConnected(t.redis, other);
      await markLinked(t.redis, other);
      expect((await call(`${t.api}/media/${mediaId}`, { token: otherToken })).status).to.equal(404);
      const del = await call(`${t.api}/media/${mediaId}`, { token: otherToken, method: 'DELETE' });
      expect(del.status).to.equal(404);
      expect(del.body.error).to.equal(ERRORS.mediaObjectNotFound);
      const send = await call(`${t.api}/send`, {
        token: otherToken,
        json: { to: '15551234567', attachment: { type: 'image', mediaId } },
      });
      expect(send.status).to.equal(404);
      expect(send.body.error).to.equal(ERRORS.mediaObjectNotFound);
      // Still there for its owner.
      expect((await call(`${t.api}/media/${mediaId}`, { token })).status).to.equal(200);
      const poolId = `p${Math.random().toString(36).slice(2, 9)}`;
      await new PoolStore(t.redis).create({ id: poolId, name: 'media pool', devices: [deviceId, other] });
      const { value: poolToken } = await t.services.tokens.create({ name: 'pool', poolId });
      expect((await upload(t, poolToken, randomBytes(10))).status).to.equal(403);
      expect((await call(`${t.api}/media/${mediaId}`, { token: poolToken })).status).to.equal(403);
      const pooled = await call(`${t.api}/send`, {
        token: poolToken,
        json: { to: ['15551234567'], attachment: { type: 'image', mediaId } },
      });
      expect(pooled.status).to.equal(400);
      expect(pooled.body.details).to.deep.equal([
        {
          path: ['attachment', 'mediaId'],
          message: 'attachment.mediaId cannot be sent through a pool: use url or base64',
        },
      ]);
    });

    it('When a list of 1,000 names an uploaded file, then its content holds the id only: no bytes per list or recipient', async () => {
      const bytes = randomBytes(1024 * 1024);
      const mediaId = String(((await upload(t, token, bytes)).body.data as { mediaId: string }).mediaId);
      const to = Array.from({ length: 1000 }, (_, i) => `1555${String(i).padStart(7, '0')}`);
      const res = await call(`${t.api}/send`, {
        token,
        json: { to, text: 'our menu', attachment: { type: 'image', mediaId, caption: 'menu' } },
      });
      expect(res.status).to.equal(202);
      const ids = res.body.messageIds as string[];
      expect(ids).to.have.length(1000);
      const job = (await t.services.acceptor.queue(deviceId).getJob(ids[0]!)) as Job<SendJobData>;
      const stored = await new ContentStore(t.redis, Encryption.fromEnv(), 60).get(
        deviceId,
        job.data.contentId,
      );
      expect(stored!.content.attachment).to.deep.equal({
        type: 'image',
        source: { mediaId, size: bytes.length },
        caption: 'menu',
        mimeType: 'image/png',
        filename: 'cat.png',
      });
      const contentKey = keys.content(deviceId, job.data.contentId);
      expect(await t.redis.hexists(contentKey, 'media')).to.equal(0);
      const contentBytes = Number(await t.redis.memory('USAGE', contentKey));
      console.log(
        `      content record of the 1,000-recipient list: ${contentBytes} bytes (file: ${bytes.length})`,
      );
      expect(contentBytes).to.be.below(4096);
      await t.services.acceptor.queue(deviceId).obliterate({ force: true });
    });

    it('When the media is deleted, then GET is 404 and a send naming it is 404', async () => {
      const mediaId = String(
        ((await upload(t, token, randomBytes(100))).body.data as { mediaId: string }).mediaId,
      );
      const del = await call(`${t.api}/media/${mediaId}`, { token, method: 'DELETE' });
      expect(del.status).to.equal(200);
      expect(del.body).to.deep.equal({ success: true, data: { mediaId, deleted: true } });
      expect((await call(`${t.api}/media/${mediaId}`, { token })).status).to.equal(404);
      expect(await t.redis.exists(keys.mediaBlob(deviceId, mediaId))).to.equal(0);
      const send = await call(`${t.api}/send`, {
        token,
        json: { to: '15551234567', attachment: { type: 'image', mediaId } },
      });
      expect(send.status).to.equal(404);
      expect((await call(`${t.api}/media/med_${'x'.repeat(22)}`, { token })).status).to.equal(404);
      expect((await call(`${t.api}/media/not-an-id`, { token })).status).to.equal(404);
    });

    it('When an upload is empty, untyped, too large or the device is over its quota, then 400, 400, 413 and 429', async () => {
      const empty = await upload(t, token, Buffer.alloc(0));
      expect(empty.status).to.equal(400);
      expect(empty.body.details).to.deep.equal([{ path: [], message: ERRORS.mediaBodyRequired }]);
      const untyped = await call(`${t.api}/media`, {
        token,
        body: randomBytes(10),
        headers: { 'content-type': 'nonsense' },
      });
      expect(untyped.status).to.equal(400);
      const big = await upload(t, token, Buffer.alloc(10 * 1024 * 1024 + 1));
      expect(big.status).to.equal(413);
      expect(big.body.error).to.equal(ERRORS.mediaBodyTooLarge);
      // A path is reduced to its base name (docs/media.md: file names); a device name is refused.
      const badName = await upload(t, token, randomBytes(10), 'image/png', '?filename=con');
      expect(badName.status).to.equal(400);
      // The Redis store's default quota is 64 MiB: seven uploads of 10 MiB go over it.
      const file = Buffer.alloc(10 * 1024 * 1024, 1);
      const answers: number[] = [];
      for (let i = 0; i < 7; i++) answers.push((await upload(t, token, file)).status);
      expect(answers).to.deep.equal([201, 201, 201, 201, 201, 201, 429]);
      const full = await upload(t, token, file);
      expect(full.body.error).to.equal(ERRORS.mediaQuotaFull);
      expect(full.body.stored).to.deep.equal({ bytes: 6 * file.length, objects: 6 });
    });

    it('When the media settings are set, then GET answers them (with the store) and a bad body is 400', async () => {
      const initial = await call(`${t.api}/media/settings`, { token });
      expect(initial.body.data).to.deep.equal({
        inboundTypes: [],
        inboundMaxBytes: 16 * 1024 * 1024,
        store: 'redis',
      });
      const put = await call(`${t.api}/media/settings`, {
        token,
        method: 'PUT',
        json: { inboundTypes: ['image', 'document'] },
      });
      expect(put.status).to.equal(200);
      expect(put.body.data).to.deep.equal({
        inboundTypes: ['image', 'document'],
        inboundMaxBytes: 16 * 1024 * 1024,
        store: 'redis',
      });
      const bad = await call(`${t.api}/media/settings`, {
        token,
        method: 'PUT',
        json: { inboundTypes: ['gif'] },
      });
      expect(bad.status).to.equal(400);
    });
  });

  describe('with MEDIA_STORE (a real S3 server)', () => {
    let t: TestApi;
    let s3: S3ServerHandle;
    let deviceId: string;
    let token: string;
    before(async () => {
      s3 = await startS3Server();
      const base = startApiConfigWithS3(s3);
      t = await startApi({ store: base });
    });
    beforeEach(async () => {
      deviceId = freshDeviceId();
      token = await createToken(t, { deviceId });
    });
    after(async () => {
      await t?.close();
      await s3?.stop();
    });

    it('When a file is uploaded, then its pre-signed URL fetches the file and a GET signs a fresh one', async () => {
      const bytes = randomBytes(300_000);
      const res = await upload(t, token, bytes, 'application/pdf', '?filename=menu%20card.pdf');
      expect(res.status).to.equal(201);
      const data = res.body.data as { mediaId: string; url: string; urlExpiresAt: string; store: string };
      expect(data.store).to.equal('s3');
      const file = await fetch(data.url);
      expect(file.status).to.equal(200);
      expect(file.headers.get('content-type')).to.equal('application/pdf');
      expect(file.headers.get('content-disposition')).to.include("filename*=UTF-8''menu%20card.pdf");
      expect(Buffer.from(await file.arrayBuffer()).equals(bytes)).to.equal(true);
      const again = (await call(`${t.api}/media/${data.mediaId}`, { token })).body.data as { url: string };
      expect(again.url).to.be.a('string');
      expect(Date.parse(data.urlExpiresAt) - Date.now()).to.be.within(3_500_000, 3_600_000);
    });

    it('When an inbound attachment was kept in S3, then GET /messages/:id shows a fresh URL and /media serves it from the store', async () => {
      const bytes = randomBytes(20_000);
      const stored = await t.services.media.put(deviceId, {
        bytes,
        mimeType: 'image/jpeg',
        source: 'inbound',
        messageId: 'm-1',
      });
      const mediaId = (stored as { mediaId: string }).mediaId;
      const messageId = (await t.services.inbound.record(deviceId, {
        platformMessageId: `3EB0${Date.now()}`,
        from: '15550001234',
        contact: { phone: '15550001234' },
        attachment: { type: 'image', mimeType: 'image/jpeg', size: bytes.length },
        receivedAt: new Date(),
        mediaMessage: Buffer.from('the WebMessageInfo'),
        keptMedia: { mediaId },
      }))!;
      const record = await call(`${t.api}/messages/${messageId}`, { token });
      const att = (record.body.data as { attachment: { mediaId: string; url: string } }).attachment;
      expect(att.mediaId).to.equal(mediaId);
      expect(Buffer.from(await (await fetch(att.url)).arrayBuffer()).equals(bytes)).to.equal(true);
      // No sender holds this device: only the store can have answered.
      const file = await fetch(`${t.api}/messages/${messageId}/media`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(file.status).to.equal(200);
      expect(file.headers.get('content-type')).to.equal('image/jpeg');
      expect(Buffer.from(await file.arrayBuffer()).equals(bytes)).to.equal(true);
      // Deleted, its id is dropped from the record.
      await call(`${t.api}/media/${mediaId}`, { token, method: 'DELETE' });
      const after = await call(`${t.api}/messages/${messageId}`, { token });
      expect((after.body.data as { attachment: Record<string, unknown> }).attachment).to.not.have.any.keys(
        'mediaId',
        'url',
      );
    });

    it('When the S3 server is gone, then POST /media is 503 and nothing is stored; back, it works again', async () => {
      await s3.kill();
      const res = await upload(t, token, randomBytes(1000));
      expect(res.status).to.equal(503);
      expect(res.body.error).to.equal(ERRORS.mediaStoreUnavailable);
      expect(await t.redis.keys(keys.media(deviceId, '*'))).to.deep.equal([]);
      expect(await t.redis.zcard(keys.mediaExpiries(deviceId))).to.equal(0);
      await s3.restart();
      expect((await upload(t, token, randomBytes(1000))).status).to.equal(201);
    });
  });
});

/** The API's store config with the media store in the given S3 server. */
function startApiConfigWithS3(s3: S3ServerHandle) {
  return {
    messageRetentionSeconds: 7 * 24 * 3600,
    media: mediaConfig({
      ...s3.env,
      MEDIA_S3_SSE: 'AES256',
      MEDIA_S3_TIMEOUT_MS: 3000,
      MEDIA_RETENTION_SECONDS: 24 * 3600,
      MEDIA_URL_TTL_SECONDS: 3600,
      MEDIA_DEVICE_MAX_OBJECTS: 10_000,
      MEDIA_SWEEP_INTERVAL_MS: 60_000,
    }),
  };
}
