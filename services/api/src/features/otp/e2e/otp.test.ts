import { expect } from 'chai';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { closeRedis, createRedis } from '@mgw/common';
import {
  BULL_PREFIX,
  PRIORITY,
  keys,
  renderOtp,
  sendQueueName,
  type SendJobData,
  type SendJobResult,
} from '@mgw/contracts';
import { ContentStore, Encryption } from '@mgw/store';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
} from '../../../../test/helpers/api.js';
import { requestsWaitingAtOnce } from '../../../../test/helpers/waiting-at-once.js';

describe('POST /otp', () => {
  let t: TestApi;
  let deviceId: string;
  let token: string;
  let workerConnection: Redis;
  let worker: Worker<SendJobData, SendJobResult> | undefined;
  const seen: Job<SendJobData>[] = [];

  /** A stand-in for the sender: answers each job with `answer` (`concurrency` jobs at a time). */
  function startSender(answer: (job: Job<SendJobData>) => Promise<SendJobResult>, concurrency = 1) {
    worker = new Worker<SendJobData, SendJobResult>(
      sendQueueName(deviceId),
      async (job) => {
        seen.push(job);
        return answer(job);
      },
      { connection: workerConnection, prefix: BULL_PREFIX, concurrency },
    );
  }

  before(async () => {
    t = await startApi({ otpWaitTimeoutMs: 5000 });
    workerConnection = createRedis(t.config.redis.url, 'worker', 'test-sender');
  });
  beforeEach(async () => {
    seen.length = 0;
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    await markConnected(t.redis, deviceId);
  });
  afterEach(async () => {
    await worker?.close();
    worker = undefined;
    await t.services.acceptor.queue(deviceId).obliterate({ force: true });
  });
  after(async () => {
    await t.close();
    await closeRedis(workerConnection);
  });

  const contentOf = async (job: Job<SendJobData>) =>
    (await new ContentStore(t.redis, Encryption.fromEnv(), 60).get(job.data.deviceId, job.data.contentId))
      ?.content;

  const sentResult = (job: Job<SendJobData>): SendJobResult => ({
    messageId: job.data.messageId,
    platformMessageId: job.data.platformMessageId,
    phone: job.data.to,
    sentAt: '2026-01-02T03:04:05.000Z',
  });

  it('When the sender sends the OTP, then 200 with all six data fields and the job was an OTP job', async () => {
    startSender(async (job) => sentResult(job));

    const res = await call(`${t.api}/otp`, { token, json: { phone: '15551234567', code: 123456 } });

    expect(res.status).to.equal(200);
    const job = seen[0]!;
    expect(res.body).to.deep.equal({
      success: true,
      message: 'OTP sent successfully',
      data: {
        messageId: job.data.messageId,
        platformMessageId: job.data.platformMessageId,
        phone: '15551234567',
        code: '123456',
        language: 'English',
        sentAt: '2026-01-02T03:04:05.000Z',
      },
    });
    expect(job.id).to.equal(job.data.messageId);
    expect(job.opts.priority).to.equal(PRIORITY.otp);
    expect(job.data).to.include({ kind: 'otp', to: '15551234567' });
    expect(job.data).to.not.have.any.keys('text');
    expect(job.data.expiresAt).to.be.a('number');
    expect(await contentOf(job)).to.deep.equal({
      text: renderOtp('123456', 'English'),
      otp: { language: 'English' },
    });
    expect(await t.services.messages.get(job.data.deviceId, job.data.messageId)).to.include({
      kind: 'otp',
      status: 'queued',
    });
    const metrics = await t.services.metrics.registry.getSingleMetricAsString('mgw_otp_sent_total');
    expect(metrics).to.match(/language="English"\} [1-9]/);
  });

  it('When the language is Arabic, then the Arabic template is sent and echoed', async () => {
    startSender(async (job) => sentResult(job));
    const res = await call(`${t.api}/otp`, {
      token,
      json: { phone: '15551234567', code: '0042', language: 'Arabic' },
    });
    expect(res.status).to.equal(200);
    expect((res.body.data as Record<string, unknown>).language).to.equal('Arabic');
    expect((res.body.data as Record<string, unknown>).code).to.equal('0042');
    expect((await contentOf(seen[0]!))?.text).to.equal(renderOtp('0042', 'Arabic'));
  });

  it('When the OTP is not sent within the wait, then 504 naming the messageId, and it is never sent afterwards', async () => {
    const fast = await startApi({ otpWaitTimeoutMs: 300 });
    try {
      const fastToken = await createToken(fast, { deviceId });
      const res = await call(`${fast.api}/otp`, {
        token: fastToken,
        json: { phone: '15551234567', code: '1234' },
      });
      expect(res.status).to.equal(504);
      expect(res.body).to.have.keys('success', 'error', 'messageId');
      expect(res.body.success).to.equal(false);
      expect(res.body.error).to.equal('OTP was not sent in time and will not be sent');
      const id = String(res.body.messageId);
      expect(await t.services.acceptor.queue(deviceId).getJobState(id)).to.equal('unknown');
      expect(await t.services.messages.get(deviceId, id)).to.include({
        status: 'failed',
        error: 'otp_expired',
      });
      // a sender that comes back now finds nothing to send
      startSender(async (job) => sentResult(job));
      await new Promise((r) => setTimeout(r, 300));
      expect(seen).to.deep.equal([]);
    } finally {
      await fast.close();
    }
  });

  it('When the send attempt had started as the wait ran out, then the API waits for it and answers its result', async () => {
    const fast = await startApi({ otpWaitTimeoutMs: 300 });
    try {
      // A sender that claims the message (as the real one does before the socket write), then is slow.
      startSender(async (job) => {
        expect(await t.services.messages.claim(job.data)).to.equal('claimed');
        await new Promise((r) => setTimeout(r, 900));
        await t.services.messages.markSent(job.data, new Date('2026-01-02T03:04:05.000Z'));
        return sentResult(job);
      });
      const fastToken = await createToken(fast, { deviceId });
      const res = await call(`${fast.api}/otp`, {
        token: fastToken,
        json: { phone: '15551234567', code: '4321' },
      });
      expect(res.status).to.equal(200);
      expect(res.body.data).to.include({ code: '4321', sentAt: '2026-01-02T03:04:05.000Z' });
    } finally {
      await fast.close();
    }
  });

  it('When the send fails for good, then 502 with the reason and the messageId', async () => {
    startSender(async () => {
      throw new UnrecoverableError('not_on_whatsapp');
    });
    const res = await call(`${t.api}/otp`, { token, json: { phone: '15551234567', code: '1234' } });
    expect(res.status).to.equal(502);
    expect(res.body).to.deep.equal({
      success: false,
      error: 'OTP could not be sent: not_on_whatsapp',
      messageId: seen[0]!.data.messageId,
    });
  });

  it('When the device is not connected, then 409', async () => {
    await t.redis.hset(keys.session(deviceId), 'status', 'disconnected');
    const res = await call(`${t.api}/otp`, { token, json: { phone: '15551234567', code: '1234' } });
    expect(res.status).to.equal(409);
    expect(res.body).to.deep.equal({ success: false, error: 'No connected messenger device found' });
  });

  it('When a dozen OTPs of one device wait at once, then each gets its answer and Node sees no listener leak', async () => {
    const busy = await startApi({ otpWaitTimeoutMs: 5000, rateLimits: { otp: 100 } });
    try {
      const busyToken = await createToken(busy, { deviceId });
      // The sender holds every job until all twelve are waiting.
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      startSender(async (job) => {
        await released;
        return sentResult(job);
      }, 12);
      const { statuses, leakWarnings } = await requestsWaitingAtOnce({
        start: () =>
          Array.from({ length: 12 }, (_, i) =>
            call(`${busy.api}/otp`, {
              token: busyToken,
              json: { phone: '15551234567', code: String(100_000 + i) },
            }),
          ),
        allHeld: () => seen.length === 12,
        release,
        what: 'twelve OTP jobs taken',
      });
      expect(statuses).to.deep.equal(Array(12).fill(200));
      expect(leakWarnings).to.deep.equal([]);
    } finally {
      await busy.close();
    }
  });

  it('When an OTP with an Idempotency-Key is in flight, then a duplicate gets 409, and after it finished the same response is replayed', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const jobStarted = new Promise<void>((r) => (started = r));
    startSender(async (job) => {
      started();
      await released;
      return sentResult(job);
    });
    const headers = { 'Idempotency-Key': 'otp-1' };
    const json = { phone: '15551234567', code: '987654' };

    const first = call(`${t.api}/otp`, { token, json, headers });
    await jobStarted;
    const duplicate = await call(`${t.api}/otp`, { token, json, headers });
    release();
    const firstRes = await first;
    const replay = await call(`${t.api}/otp`, { token, json, headers });

    expect(duplicate.status).to.equal(409);
    expect(duplicate.body).to.deep.equal({
      success: false,
      error: 'A request with this Idempotency-Key is still in progress',
    });
    expect(firstRes.status).to.equal(200);
    expect(replay.status).to.equal(200);
    expect(replay.body).to.deep.equal(firstRes.body);
    expect(seen).to.have.length(1);
  });
});
