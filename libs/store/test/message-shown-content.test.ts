import { expect } from 'chai';
import { Redis } from 'ioredis';
import {
  PRIORITY,
  keys,
  newMessageId,
  type MessageContent,
  type RecipientVars,
  type SendJobData,
} from '@mgw/contracts';
import {
  ContentStore,
  Encryption,
  MessageStore,
  openSendQueue,
  stageQueued,
  type SendQueue,
} from '../src/index.js';
import { sendJobData } from '@mgw/testing';

/**
 * The text an outbound message showed its recipient, for the dashboard: kept sealed in the
 * request's one content (with a personalised batch's variables), which lives as long as the records
 * that name it — never a copy per recipient, never clear text.
 */
describe('store: what a sent message showed (real Redis)', () => {
  let redis: Redis;
  const queues: SendQueue[] = [];
  before(() => {
    redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
  });
  after(async () => {
    await Promise.all(queues.map((q) => q.obliterate({ force: true }).then(() => q.close())));
    await redis.quit();
  });

  function stores(retentionSeconds: number): { messages: MessageStore; contents: ContentStore } {
    return {
      messages: new MessageStore(redis, retentionSeconds),
      contents: new ContentStore(redis, Encryption.fromEnv(), retentionSeconds),
    };
  }

  /** A request accepted the way the API does it: content once (variables when given), one job each. */
  async function accept(
    contents: ContentStore,
    content: MessageContent,
    vars: RecipientVars[],
    kind: 'send' | 'otp' = 'send',
  ): Promise<{ deviceId: string; jobs: SendJobData[] }> {
    const deviceId = `shown-${Math.random().toString(36).slice(2, 8)}`;
    const queue = openSendQueue(redis, deviceId);
    queues.push(queue);
    const contentId = newMessageId();
    const jobs: SendJobData[] = vars.map((_, i) =>
      sendJobData(deviceId, { kind, to: String(15551230000 + i), contentId, linkGeneration: 0 }),
    );
    const multi = redis.multi();
    contents.stage(multi, deviceId, contentId, content, jobs.length);
    if (content.personalised)
      contents.stageVars(
        multi,
        deviceId,
        contentId,
        jobs.map((j, i) => ({ messageId: j.messageId, vars: vars[i]! })),
      );
    stageQueued(multi, deviceId, jobs.length, ContentStore.sizeOf(content));
    await multi.exec();
    await queue.addBulk(
      jobs.map((data) => ({ name: 'send', data, opts: { jobId: data.messageId, priority: PRIORITY.send } })),
    );
    return { deviceId, jobs };
  }

  /** Every value of every key of the device, as Redis holds it. */
  async function dump(deviceId: string): Promise<string> {
    const found = await redis.keys(`*${deviceId}*`);
    const parts = await Promise.all(
      found.map(async (k) => {
        const type = await redis.type(k);
        if (type === 'hash') return JSON.stringify(await redis.hgetall(k));
        if (type === 'string') return (await redis.get(k)) ?? '';
        return '';
      }),
    );
    return parts.join('\n');
  }

  it('When a personalised batch is sent, then each message shows its own text, read from the batch’s one sealed content (no clear text in Redis)', async () => {
    const { messages, contents } = stores(600);
    const content: MessageContent = { text: 'Hello {{name}}, your order is ready', personalised: true };
    const { deviceId, jobs } = await accept(contents, content, [{ name: 'Alice' }, { name: 'Bob' }]);
    for (const job of jobs) {
      expect(await messages.claim(job)).to.equal('claimed');
      expect(await messages.markSent(job, new Date())).to.equal(true);
    }
    const [a, b] = jobs as [SendJobData, SendJobData];
    // Every message settled: the content stays (it is what the records are shown from).
    expect(await messages.contentIdOf(deviceId, a.messageId)).to.equal(a.contentId);
    expect(await contents.shown(deviceId, a.contentId, a.messageId)).to.deep.equal({
      text: 'Hello Alice, your order is ready',
    });
    expect(await contents.shown(deviceId, b.contentId, b.messageId)).to.deep.equal({
      text: 'Hello Bob, your order is ready',
    });
    const raw = await dump(deviceId);
    for (const clear of ['Alice', 'Bob', 'order is ready', '{{name}}']) expect(raw).to.not.include(clear);
    // One content for the batch: the records hold only its id.
    expect(await redis.keys(keys.content(deviceId, '*'))).to.have.length(1);
    expect(await redis.hget(keys.message(deviceId, a.messageId), 'contentId')).to.equal(a.contentId);
  });

  it('When a message with an attachment is sent, then its caption and the media kind are shown, its bytes are gone', async () => {
    const { messages, contents } = stores(600);
    const content: MessageContent = {
      text: 'see the menu',
      attachment: {
        type: 'image',
        source: { url: 'https://example.com/menu.png' },
        caption: 'Menu of the day',
        mimeType: 'image/png',
      },
    };
    const { deviceId, jobs } = await accept(contents, content, [{}]);
    const job = jobs[0]!;
    await messages.markSent(job, new Date());
    expect(await contents.shown(deviceId, job.contentId, job.messageId)).to.deep.equal({
      text: 'see the menu',
      attachment: { type: 'image', mimeType: 'image/png', caption: 'Menu of the day' },
    });
    expect(await dump(deviceId)).to.not.include('Menu of the day');
  });

  it('When the records of a content expire, then the content expires with them, and a later change of a record keeps it as long as that record', async () => {
    const { messages, contents } = stores(600);
    const { deviceId, jobs } = await accept(contents, { text: 'kept as long as its records' }, [{}, {}]);
    const [a, b] = jobs as [SendJobData, SendJobData];
    for (const job of jobs) {
      expect(await messages.claim(job)).to.equal('claimed');
      await messages.markSent(job, new Date());
    }
    const contentKey = keys.content(deviceId, a.contentId);
    // The content's TTL is its records': set again by each change of one of them.
    await redis.expire(contentKey, 5);
    await messages.markReceipts(deviceId, [
      { platformMessageId: b.platformMessageId, status: 'delivered', at: new Date() },
    ]);
    const [contentTtl, recordTtl] = await Promise.all([
      redis.ttl(contentKey),
      redis.ttl(keys.message(deviceId, b.messageId)),
    ]);
    expect(contentTtl).to.be.greaterThan(590);
    expect(contentTtl).to.be.at.least(recordTtl);

    // A short retention: once the records are gone, so is the content (no key outlives them).
    const short = stores(1);
    const done = await accept(short.contents, { text: 'gone with its records' }, [{}]);
    const job = done.jobs[0]!;
    await short.messages.markSent(job, new Date());
    expect(await short.contents.shown(done.deviceId, job.contentId, job.messageId)).to.deep.equal({
      text: 'gone with its records',
    });
    const deadline = Date.now() + 10_000;
    while ((await redis.exists(keys.message(done.deviceId, job.messageId))) === 1 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await redis.exists(keys.message(done.deviceId, job.messageId))).to.equal(0);
    expect(await redis.ttl(keys.content(done.deviceId, job.contentId))).to.be.at.most(0);
  });

  it('When an OTP or a poll is sent, then its content leaves Redis with it and nothing is shown from it', async () => {
    const { messages, contents } = stores(600);
    const otp = await accept(
      contents,
      { text: 'Your code is 123456', otp: { language: 'English' } },
      [{}],
      'otp',
    );
    const otpJob = otp.jobs[0]!;
    expect(await messages.contentIdOf(otp.deviceId, otpJob.messageId)).to.equal(undefined);
    await messages.markSent(otpJob, new Date());
    expect(await redis.exists(keys.content(otp.deviceId, otpJob.contentId))).to.equal(0);
    expect(await messages.contentIdOf(otp.deviceId, otpJob.messageId)).to.equal(undefined);

    const poll = await accept(
      contents,
      { poll: { question: 'Lunch?', options: ['Yes', 'No'], multiple: false } },
      [{}],
    );
    const pollJob = poll.jobs[0]!;
    await messages.markSent(pollJob, new Date());
    expect(await redis.exists(keys.content(poll.deviceId, pollJob.contentId))).to.equal(0);
  });
});
