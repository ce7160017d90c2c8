import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { createRedis } from '@mgw/common';
import { ERRORS, keys, type DeviceCommandReply } from '@mgw/contracts';
import { DeviceCommandResponder, storageContext } from '@mgw/store';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
} from '../../../../test/helpers/api.js';

describe('GET /messages/:id/media', () => {
  let t: TestApi;
  let deviceId: string;
  let token: string;
  let messageId: string;
  let subscriber: Redis | undefined;
  const failures: unknown[] = [];
  const file = Buffer.from('%PDF-1.4 a small invoice\n'.repeat(20));

  /** A stand-in for the sender holding the device: hands `file` over, or answers `failure`. */
  async function startHolder(failure?: DeviceCommandReply): Promise<void> {
    subscriber = createRedis(t.config.redis.url, 'subscriber', 'test-holder');
    await new DeviceCommandResponder(subscriber, t.redis).listen(
      async (cmd, reply) => {
        if (cmd.type !== 'download-media' || cmd.deviceId !== deviceId) return;
        if (failure) return reply(failure);
        const key = keys.mediaDownload(deviceId, cmd.requestId);
        const bytes = t.services.encryption.seal(file, storageContext(key, 'bytes'));
        await t.redis.hset(key, { bytes, mimeType: 'application/pdf', fileName: 'invoice.pdf' });
        await reply({ ok: true });
      },
      (err) => failures.push(err),
    );
  }

  before(async () => {
    t = await startApi();
  });
  beforeEach(async () => {
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    messageId = (await t.services.inbound.record(deviceId, {
      platformMessageId: `3EB0${Date.now()}`,
      from: '15550001234',
      contact: { phone: '15550001234' },
      attachment: {
        type: 'document',
        mimeType: 'application/pdf',
        fileName: 'invoice.pdf',
        size: file.length,
      },
      receivedAt: new Date(),
      mediaMessage: Buffer.from('the WebMessageInfo'),
    }))!;
  });
  afterEach(async () => {
    await subscriber?.quit();
    subscriber = undefined;
    expect(failures.splice(0), 'the holder failed').to.deep.equal([]);
  });
  after(async () => {
    await t.close();
  });

  it('When the holder of the device downloads the attachment, then the answer is its bytes, type and name, and the hand-over key is gone', async () => {
    await startHolder();
    const res = await fetch(`${t.api}/messages/${messageId}/media`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/pdf');
    expect(res.headers.get('content-disposition')).to.equal("attachment; filename*=UTF-8''invoice.pdf");
    expect(Buffer.from(await res.arrayBuffer()).equals(file)).to.equal(true);
    expect(await t.redis.keys(keys.mediaDownload(deviceId, '*'))).to.deep.equal([]);
  });

  it('When the holder cannot download it, then the answer is 502', async () => {
    await startHolder({ ok: false, error: 'download failed' });
    const res = await call(`${t.api}/messages/${messageId}/media`, { token });
    expect(res.status).to.equal(502);
    expect(res.body).to.include({ success: false, error: ERRORS.mediaUnavailable });
  });

  it('When no sender holds the device, then the answer is 409 at once', async () => {
    const started = Date.now();
    const res = await call(`${t.api}/messages/${messageId}/media`, { token });
    expect(res.status).to.equal(409);
    expect(res.body).to.include({ success: false, error: ERRORS.noDevice });
    expect(Date.now() - started).to.be.below(2000);
  });

  it("When the message is unknown, another device's, or one sent through the gateway, then 404 saying which, and no holder is asked", async () => {
    await startHolder();
    const other = await createToken(t, { deviceId: freshDeviceId() });
    const notTheirs = await call(`${t.api}/messages/${messageId}/media`, { token: other });
    expect(notTheirs.status).to.equal(404);
    expect(notTheirs.body).to.include({ success: false, error: ERRORS.messageNotFound });
    const unknown = await call(`${t.api}/messages/00000000-0000-4000-8000-000000000000/media`, { token });
    expect(unknown.status).to.equal(404);
    expect(unknown.body).to.include({ error: ERRORS.messageNotFound });
    await markConnected(t.redis, deviceId);
    const sent = await call(`${t.api}/send`, {
      token,
      method: 'POST',
      json: { to: '15550001234', text: 'hi' },
    });
    const own = await call(`${t.api}/messages/${String(sent.body.messageId)}/media`, { token });
    expect(own.status).to.equal(404);
    expect(own.body).to.include({ error: ERRORS.mediaNotFound });
    expect(await t.redis.keys(keys.mediaDownload(deviceId, '*'))).to.deep.equal([]);
  });
});
