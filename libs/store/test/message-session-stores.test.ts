import { expect } from 'chai';
import { Redis } from 'ioredis';
import { PRIORITY, keys, newMessageId, type MessageContent, type SendJobData } from '@mgw/contracts';
import {
  ContentStore,
  MessageStore,
  SessionStore,
  getDeviceState,
  Encryption,
  markRestricted,
  openSendQueue,
  purgeDeviceMessages,
  stageQueued,
  type SendQueue,
} from '../src/index.js';
import { sendJobData } from '@mgw/testing';

describe('store: messages, contents and the device queue quota (real Redis)', () => {
  let redis: Redis;
  let store: MessageStore;
  let contents: ContentStore;
  const queues: SendQueue[] = [];
  before(() => {
    redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    store = new MessageStore(redis, 60);
    contents = new ContentStore(redis, Encryption.fromEnv(), 60);
  });
  after(async () => {
    await Promise.all(queues.map((q) => q.obliterate({ force: true }).then(() => q.close())));
    await redis.quit();
  });

  /** A request of `n` messages accepted the way the API does: content once, quota, one job each. */
  async function accept(
    n: number,
    content: MessageContent = { text: 'hello' },
    media?: Buffer,
  ): Promise<{ deviceId: string; jobs: SendJobData[]; queue: SendQueue }> {
    const deviceId = `st-${Math.random().toString(36).slice(2, 8)}`;
    const queue = openSendQueue(redis, deviceId);
    queues.push(queue);
    const contentId = newMessageId();
    const jobs: SendJobData[] = Array.from({ length: n }, (_, i) =>
      sendJobData(deviceId, { to: String(15551230000 + i), contentId, linkGeneration: 0 }),
    );
    const multi = redis.multi();
    contents.stage(multi, deviceId, contentId, content, n, media);
    stageQueued(multi, deviceId, n, ContentStore.sizeOf(content, media));
    await multi.exec();
    await queue.addBulk(
      jobs.map((data) => ({ name: 'send', data, opts: { jobId: data.messageId, priority: PRIORITY.send } })),
    );
    return { deviceId, jobs, queue };
  }

  it('When a message is only queued, then it has no record and reads as queued from its job', async () => {
    const { deviceId, jobs } = await accept(1);
    const job = jobs[0]!;
    expect(await redis.exists(keys.message(deviceId, job.messageId))).to.equal(0);
    expect(await store.get(deviceId, job.messageId)).to.deep.include({
      messageId: job.messageId,
      status: 'queued',
      to: job.to,
      kind: 'send',
      platformMessageId: job.platformMessageId,
    });
    expect(await store.get('another-device', job.messageId)).to.equal(undefined);
  });

  it('When a message is claimed, then the device remembers when (for the pacing of the next owner); a refused claim leaves it', async () => {
    const { deviceId, jobs } = await accept(2);
    const pace = keys.devicePace(deviceId);
    expect(await redis.get(pace)).to.equal(null);
    expect(await store.claim(jobs[0]!, 1_700_000_000_000)).to.equal('claimed');
    expect(await redis.get(pace)).to.equal('1700000000000');
    expect(await redis.ttl(pace)).to.be.within(3000, 3600);
    await markRestricted(redis, deviceId, 'rate_limited', Date.now() + 60_000);
    expect(await store.claim(jobs[1]!, 1_700_000_005_000)).to.equal('restricted');
    expect(await redis.get(pace)).to.equal('1700000000000');
  });

  it('When receipts arrive out of order, then the status only moves forward', async () => {
    const { deviceId, jobs } = await accept(1);
    const job = jobs[0]!;
    expect(await store.claim(job)).to.equal('claimed');
    expect(await store.markSent(job, new Date())).to.equal(true);
    expect(await store.markReceipt(deviceId, job.messageId, 'read')).to.equal(true);
    expect(await store.markReceipt(deviceId, job.messageId, 'delivered')).to.equal(false);
    const got = await store.get(deviceId, job.messageId);
    expect(got?.status).to.equal('read');
    expect(got?.sentAt).to.be.a('string');
    expect(got).to.not.have.any.keys('settled', 'sendingAt');
    expect(await store.findByPlatformId(deviceId, job.platformMessageId)).to.equal(job.messageId);
    expect(await redis.ttl(keys.message(deviceId, job.messageId))).to.be.within(1, 60);
  });

  it('When receipts arrive in a batch, then one call applies them all, skipping unknown ids and stale ones', async () => {
    const { deviceId, jobs } = await accept(3);
    for (const job of jobs) {
      await store.claim(job);
      await store.markSent(job, new Date());
    }
    await store.markReceipt(deviceId, jobs[2]!.messageId, 'read');
    const at = new Date();
    const applied = await store.markReceipts(deviceId, [
      { platformMessageId: jobs[0]!.platformMessageId, status: 'delivered', at },
      { platformMessageId: jobs[1]!.platformMessageId, status: 'read', at },
      { platformMessageId: 'not-ours', status: 'delivered', at },
      { platformMessageId: jobs[2]!.platformMessageId, status: 'delivered', at },
    ]);
    expect(applied.map((r) => r.platformMessageId)).to.deep.equal([
      jobs[0]!.platformMessageId,
      jobs[1]!.platformMessageId,
    ]);
    expect((await store.get(deviceId, jobs[0]!.messageId))?.status).to.equal('delivered');
    expect(await store.get(deviceId, jobs[1]!.messageId)).to.include({
      status: 'read',
      readAt: at.toISOString(),
    });
    expect((await store.get(deviceId, jobs[2]!.messageId))?.status).to.equal('read');
  });

  it('When a read receipt comes before its delivery receipt (or Baileys merged them), then it says it made the message delivered too, once, and the late delivery receipt changes nothing', async () => {
    const { deviceId, jobs } = await accept(2);
    for (const job of jobs) {
      await store.claim(job, Date.now(), `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01`);
      await store.markSent(job, new Date());
    }
    const [first, second] = jobs.map((j) => j.platformMessageId) as [string, string];
    const at = new Date();
    // The first message: read before delivered. The second: delivered, then read.
    const applied = await store.markReceipts(
      deviceId,
      [
        { platformMessageId: first, status: 'read', at },
        { platformMessageId: second, status: 'delivered', at },
      ],
      true,
    );
    expect(applied.map((r) => [r.platformMessageId, r.status, r.impliedDelivery ?? false])).to.deep.equal([
      [first, 'read', true],
      [second, 'delivered', false],
    ]);
    expect(applied.every((r) => r.traceparent === `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01`)).to.equal(
      true,
    );
    const later = await store.markReceipts(deviceId, [
      { platformMessageId: first, status: 'delivered', at: new Date() },
      { platformMessageId: second, status: 'read', at: new Date() },
    ]);
    expect(later.map((r) => [r.platformMessageId, r.status, r.impliedDelivery ?? false])).to.deep.equal([
      [second, 'read', false],
    ]);
    expect(later[0]!.traceparent, 'not asked for').to.equal(undefined);
    expect(await store.get(deviceId, jobs[0]!.messageId)).to.include({
      status: 'read',
      deliveredAt: at.toISOString(),
      readAt: at.toISOString(),
    });
  });

  it('When a delivery receipt overtakes the sender marking the message sent, then the record keeps delivered and gets its sentAt', async () => {
    const { deviceId, jobs } = await accept(1);
    const job = jobs[0]!;
    await store.claim(job);
    expect(await store.markReceipt(deviceId, job.messageId, 'delivered')).to.equal(true);
    const sentAt = new Date();
    expect(await store.markSent(job, sentAt)).to.equal(true);
    expect(await store.get(deviceId, job.messageId)).to.include({
      status: 'delivered',
      sentAt: sentAt.toISOString(),
    });
    expect(await store.markSent(job, new Date(0))).to.equal(false); // sentAt is not overwritten
  });

  it('When a sent message is later marked failed, then it stays sent; a failed one stays failed', async () => {
    const { deviceId, jobs } = await accept(2);
    const [a, b] = jobs as [SendJobData, SendJobData];
    await store.markSent(a, new Date());
    expect(await store.markFailed(a, 'x')).to.equal(false);
    expect(await store.markFailed(b, 'logged_out')).to.equal(true);
    expect(await store.markSent(b, new Date())).to.equal(false);
    expect(await store.get(deviceId, b.messageId)).to.include({ status: 'failed', error: 'logged_out' });
    expect(await store.claim(b)).to.equal('failed');
  });

  it('When every message of a request settles, then the quota is given back once and its attachment bytes leave Redis (its text stays for the records)', async () => {
    const media = Buffer.alloc(1000, 1);
    const content = {
      text: 'see attached',
      attachment: { type: 'document' as const, source: { stored: true as const, size: 1000 } },
    };
    const { deviceId, jobs } = await accept(3, content, media);
    const size = ContentStore.sizeOf(content, media);
    expect(await getDeviceState(redis, deviceId)).to.include({ queuedMessages: 3, queuedBytes: size });
    expect((await contents.media(deviceId, jobs[0]!.contentId))?.equals(media)).to.equal(true);

    await store.markSent(jobs[0]!, new Date());
    await store.markSent(jobs[0]!, new Date()); // a retry's second "sent" settles nothing more
    await store.markFailed(jobs[1]!, 'not_on_whatsapp');
    expect(await getDeviceState(redis, deviceId)).to.include({ queuedMessages: 1, queuedBytes: size });
    expect(await contents.get(deviceId, jobs[0]!.contentId)).to.not.equal(undefined);

    await store.markSent(jobs[2]!, new Date());
    expect(await getDeviceState(redis, deviceId)).to.include({ queuedMessages: 0, queuedBytes: 0 });
    const key = keys.content(deviceId, jobs[0]!.contentId);
    expect(await redis.hexists(key, 'media')).to.equal(0);
    expect(await redis.hget(key, 'bytes')).to.equal('0');
    expect(await contents.shown(deviceId, jobs[0]!.contentId, jobs[0]!.messageId)).to.deep.equal({
      text: 'see attached',
      attachment: { type: 'document' },
    });
  });

  it('When the API expires an OTP, then only an unclaimed message expires; a claimed one is left to its attempt', async () => {
    const { jobs } = await accept(2);
    const [a, b] = jobs as [SendJobData, SendJobData];
    expect(await store.expireUnclaimed(a, 'otp_expired')).to.equal('expired');
    expect(await store.claim(a)).to.equal('failed'); // the sender will not send it afterwards
    expect(await store.claim(b)).to.equal('claimed');
    expect(await store.expireUnclaimed(b, 'otp_expired')).to.equal('claimed');
    await store.markSent(b, new Date());
    expect(await store.expireUnclaimed(b, 'otp_expired')).to.equal('claimed');
    expect(await store.claim({ ...b, expiresAt: Date.now() - 1, messageId: newMessageId() })).to.equal(
      'expired',
    );
  });

  it('When the device is paused, then the claim refuses (restricted) and claims nothing; once the pause is over it claims', async () => {
    const { deviceId, jobs } = await accept(1);
    const job = jobs[0]!;
    const now = Date.now();
    await markRestricted(redis, deviceId, 'rate_limited', now + 60_000, now);
    expect(await store.claim(job, now)).to.equal('restricted');
    // Nothing was claimed: no attempt started, so the API may still expire it.
    expect(await redis.hexists(keys.message(deviceId, job.messageId), 'sendingAt')).to.equal(0);
    expect(await store.claim(job, now + 60_001)).to.equal('claimed');
  });

  it("When a device's messages are purged, then every waiting job ends failed with the reason, the quota is back and a new link generation starts", async () => {
    const { deviceId, jobs, queue } = await accept(5);
    const before = (await getDeviceState(redis, deviceId)).linkGeneration;
    expect(await purgeDeviceMessages({ redis, queue, messages: store }, deviceId, 'logged_out')).to.equal(5);
    expect(await queue.count()).to.equal(0);
    for (const j of jobs) {
      expect(await store.get(deviceId, j.messageId)).to.include({ status: 'failed', error: 'logged_out' });
    }
    const after = await getDeviceState(redis, deviceId);
    expect(after).to.include({ queuedMessages: 0, queuedBytes: 0 });
    expect(after.linkGeneration).to.equal(before + 1);
  });

  it("When a device's messages are purged, then a pooled message whose send never began there (never claimed, or every attempt ended before the socket) stays for its pool to move; one whose send began, or whose attempt's end is unknown, ends failed", async () => {
    const deviceId = `st-${Math.random().toString(36).slice(2, 8)}`;
    const queue = openSendQueue(redis, deviceId);
    queues.push(queue);
    const [waiting, unsent, began, unknown] = [0, 1, 2, 3].map((i) =>
      sendJobData(deviceId, {
        to: String(15551240000 + i),
        linkGeneration: 0,
        poolId: 'pool-x',
        batchId: 'b1',
      }),
    ) as [SendJobData, SendJobData, SendJobData, SendJobData];
    await queue.addBulk(
      [waiting, unsent, began, unknown].map((data) => ({
        name: 'send',
        data,
        opts: { jobId: data.messageId, priority: PRIORITY.send },
      })),
    );
    // Each retry waits after an attempt: one that found the socket closed (twice), one that
    // wrote and got no ack, one whose process died before it could say.
    const at = Date.now();
    for (const n of [0, 1]) {
      expect(await store.claim(unsent, at + n)).to.equal('claimed');
      expect(await store.endAttempt(unsent, at + n, false)).to.equal(true);
    }
    expect(await store.claim(began, at)).to.equal('claimed');
    expect(await store.endAttempt(began, at, true)).to.equal(true);
    expect(await store.claim(unknown, at)).to.equal('claimed');
    expect(await purgeDeviceMessages({ redis, queue, messages: store }, deviceId, 'logged_out')).to.equal(2);
    for (const kept of [waiting, unsent]) expect(await queue.getJob(kept.messageId)).to.not.equal(undefined);
    for (const ended of [began, unknown]) {
      expect(await queue.getJob(ended.messageId)).to.equal(undefined);
      expect(await store.get(deviceId, ended.messageId)).to.include({
        status: 'failed',
        error: 'logged_out',
        sendBegan: true,
      });
    }
    expect(await store.get(deviceId, waiting.messageId)).to.include({ status: 'queued' });
    expect(await store.get(deviceId, waiting.messageId)).to.not.have.property('sendBegan');
    expect(await store.get(deviceId, waiting.messageId)).to.not.have.property('engine');
    expect(await store.get(deviceId, unsent.messageId)).to.include({
      status: 'queued',
      sendBegan: false,
      engine: 'linked',
    });
    expect(await redis.hget(keys.message(deviceId, unsent.messageId), 'unsentAttempts')).to.equal('2');
  });

  it('When an engine with no idempotency key (the Cloud API) claims, then the record says so, and a message an earlier attempt may have written is refused as unknown', async () => {
    const deviceId = `st-${Math.random().toString(36).slice(2, 8)}`;
    const [ended, died, unsent] = [0, 1, 2].map((i) =>
      sendJobData(deviceId, { to: String(15551250000 + i), linkGeneration: 0 }),
    ) as [SendJobData, SendJobData, SendJobData];
    const cloud = { once: true, engine: 'cloud' } as const;
    const at = Date.now();
    for (const job of [ended, died, unsent])
      expect(await store.claim(job, at, undefined, cloud)).to.equal('claimed');
    expect(await store.endAttempt(ended, at, true)).to.equal(true);
    expect(await store.endAttempt(unsent, at, false)).to.equal(true);
    // Began (its request may have reached Meta), or died mid-way: never claimed again.
    expect(await store.claim(ended, at + 1, undefined, cloud)).to.equal('unknown');
    expect(await store.claim(died, at + 1, undefined, cloud)).to.equal('unknown');
    // Nothing of it reached Meta: claimed again.
    expect(await store.claim(unsent, at + 1, undefined, cloud)).to.equal('claimed');
    for (const job of [ended, died, unsent])
      expect(await store.get(deviceId, job.messageId)).to.include({ engine: 'cloud', sendBegan: true });
  });

  it('When a device has no session record, then it reads as disconnected; details go on disconnect', async () => {
    const sessions = new SessionStore(redis);
    expect(await sessions.get('nobody')).to.deep.equal({ status: 'disconnected' });
    await sessions.update('dev2', 'connected', { phone: '15550000001', name: 'A' });
    expect(await sessions.acceptsMessages('dev2')).to.equal(true);
    await sessions.markDisconnected('dev2', 'logged_out');
    const s = await sessions.get('dev2');
    expect(s).to.include({ status: 'disconnected', lastDisconnectReason: 'logged_out' });
    expect(s.phone).to.equal(undefined);
    expect(await sessions.acceptsMessages('dev2')).to.equal(false);
  });
});
