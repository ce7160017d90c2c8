import { expect } from 'chai';
import { Redis } from 'ioredis';
import { newMessageId, newPlatformMessageId, type SendJobData } from '@mgw/contracts';
import { BatchStore, Encryption, MessageStore, WebhookStore } from '../src/index.js';

/** A scheduled batch's counts: its messages wait in `scheduled` and the transition script moves them from there. */
describe('store: a scheduled batch’s counts and records (real Redis)', () => {
  let redis: Redis;
  let messages: MessageStore;
  let batches: BatchStore;
  let webhooks: WebhookStore;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    messages = new MessageStore(redis, 60);
    batches = new BatchStore(redis, 60);
    webhooks = new WebhookStore(redis, Encryption.fromEnv(), 60);
  });
  after(async () => {
    await redis.quit();
  });

  const job = (deviceId: string, batchId: string, sendAt: number): SendJobData => ({
    kind: 'send',
    messageId: newMessageId(),
    platformMessageId: newPlatformMessageId(),
    deviceId,
    to: '15551230001',
    contentId: newMessageId(),
    batchId,
    linkGeneration: 0,
    enqueuedAt: Date.now(),
    sendAt,
  });

  it('When messages of a scheduled batch fail before it is due, then they leave `scheduled`; once due the rest read `queued`; the last one sent completes the batch', async () => {
    const deviceId = `sch-${Math.random().toString(36).slice(2, 8)}`;
    await webhooks.set(deviceId, { url: 'https://hooks.example.com/x' });
    const batchId = newMessageId();
    const sendAt = Date.now() + 60_000;
    const jobs = [job(deviceId, batchId, sendAt), job(deviceId, batchId, sendAt)];
    const multi = redis.multi();
    batches.stage(multi, deviceId, batchId, jobs.length, new Date(), sendAt);
    await multi.exec();
    expect((await batches.get(deviceId, batchId))!.counts).to.include({ scheduled: 2, queued: 0 });

    expect(await messages.markFailed(jobs[0]!, 'logged_out')).to.equal(true);
    const early = (await batches.get(deviceId, batchId))!;
    expect(early.counts).to.deep.equal({
      scheduled: 1,
      queued: 0,
      sent: 0,
      delivered: 0,
      read: 0,
      failed: 1,
      deleted: 0,
      held: 0,
    });
    expect(early.sendAt).to.equal(new Date(sendAt).toISOString());
    expect(early.completedAt).to.equal(undefined);
    expect(await messages.getRecord(deviceId, jobs[0]!.messageId)).to.include({
      status: 'failed',
      sendAt: new Date(sendAt).toISOString(),
    });

    // Read after its sendAt: what still waits is queued.
    const due = (await batches.get(deviceId, batchId, sendAt + 1))!;
    expect(due.counts).to.include({ scheduled: 0, queued: 1, failed: 1 });

    // The claim writes the record (status queued: the status `scheduled` is never stored, it is read
    // from sendAt); sent, the count leaves `scheduled`.
    await messages.claim(jobs[1]!);
    expect((await messages.getRecord(deviceId, jobs[1]!.messageId))!.status).to.equal('scheduled');
    await messages.markSent(jobs[1]!, new Date());
    const done = (await batches.get(deviceId, batchId))!;
    expect(done.counts).to.deep.equal({
      scheduled: 0,
      queued: 0,
      sent: 1,
      delivered: 0,
      read: 0,
      failed: 1,
      deleted: 0,
      held: 0,
    });
    expect(done.completedAt).to.be.a('string');
  });
});
