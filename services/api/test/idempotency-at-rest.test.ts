import { expect } from 'chai';
import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { closeRedis, createRedis } from '@mgw/common';
import { BULL_PREFIX, keys, sendQueueName, type SendJobData, type SendJobResult } from '@mgw/contracts';
import { hashToken, storageContext } from '@mgw/store';
import { call, createToken, freshDeviceId, markConnected, startApi, type TestApi } from './helpers/api.js';

describe('Idempotency records at rest (real Redis)', () => {
  let t: TestApi;
  let workerConnection: Redis;
  let worker: Worker<SendJobData, SendJobResult> | undefined;

  before(async () => {
    t = await startApi({ otpWaitTimeoutMs: 5000 });
    workerConnection = createRedis(t.config.redis.url, 'worker', 'test-sender');
  });
  afterEach(async () => {
    await worker?.close();
    worker = undefined;
  });
  after(async () => {
    await t.close();
    await closeRedis(workerConnection);
  });

  it('When an /otp with an Idempotency-Key was answered, then its stored replay holds no OTP code, and the replay still returns it', async () => {
    const deviceId = freshDeviceId();
    const token = await createToken(t, { deviceId });
    await markConnected(t.redis, deviceId);
    // A stand-in for the sender: answers the OTP job as sent.
    worker = new Worker<SendJobData, SendJobResult>(
      sendQueueName(deviceId),
      async (job) => ({
        messageId: job.data.messageId,
        platformMessageId: job.data.platformMessageId,
        phone: job.data.to,
        sentAt: new Date().toISOString(),
      }),
      { connection: workerConnection, prefix: BULL_PREFIX },
    );
    const code = '480913';
    const headers = { 'Idempotency-Key': 'otp-at-rest-1' };
    const json = { phone: '15551234567', code };

    const first = await call(`${t.api}/otp`, { token, json, headers });
    expect(first.status).to.equal(200);
    expect((first.body.data as Record<string, unknown>).code).to.equal(code);

    const key = keys.idempotency(hashToken(token), 'otp-at-rest-1');
    const raw = (await t.redis.get(key))!;
    expect(raw).to.be.a('string');
    expect(raw).not.to.include(code);
    expect(raw).not.to.include(Buffer.from(code).toString('base64'));
    expect(raw).not.to.include('OTP sent');
    const encryption = t.services.encryption;
    expect(encryption.keyIdOf(raw)).to.equal(encryption.currentKeyId);
    expect(JSON.parse(encryption.openText(raw, storageContext(key)))).to.include({
      state: 'done',
      status: 200,
    });

    const replay = await call(`${t.api}/otp`, { token, json, headers });
    expect(replay.status).to.equal(200);
    expect(replay.body).to.deep.equal(first.body);
    await t.services.acceptor.queue(deviceId).obliterate({ force: true });
  });

  it('When a record was stored before encryption (plaintext), then it is still replayed', async () => {
    const deviceId = freshDeviceId();
    const token = await createToken(t, { deviceId });
    const headers = { 'Idempotency-Key': 'legacy-1' };
    const json = { to: '15551234567', text: 'hello' };
    // The same request once, to learn its fingerprint; then swap in a plaintext record.
    await markConnected(t.redis, deviceId);
    const first = await call(`${t.api}/send`, { token, json, headers });
    expect(first.status).to.equal(202);
    const key = keys.idempotency(hashToken(token), 'legacy-1');
    const stored = JSON.parse(
      t.services.encryption.openText((await t.redis.get(key))!, storageContext(key)),
    ) as {
      fingerprint: string;
    };
    // A body the first answer could not have had (its id), so the replay is surely the planted one.
    const legacyBody = { success: true, messageId: 'legacy-plaintext-record' };
    await t.redis.set(
      key,
      JSON.stringify({ fingerprint: stored.fingerprint, state: 'done', status: 202, body: legacyBody }),
      'EX',
      60,
    );
    const replay = await call(`${t.api}/send`, { token, json, headers });
    expect(replay.status).to.equal(202);
    expect(replay.body).to.deep.equal(legacyBody);
    await t.services.acceptor.queue(deviceId).obliterate({ force: true });
  });
});
