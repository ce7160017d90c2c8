import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys, type SendJobData } from '@mgw/contracts';
import { MessageRetries, MessageStore } from '../src/index.js';
import { sendJobData } from '@mgw/testing';

describe('store: retry receipts in the message record, the bound and message.undecryptable (real Redis)', () => {
  let redis: Redis;
  let store: MessageStore;
  let retries: MessageRetries;
  const MAX = 3;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    store = new MessageStore(redis, 60);
    retries = new MessageRetries(redis, MAX);
  });
  after(async () => {
    await redis.quit();
  });

  /** A message of a new device, claimed and sent (its WhatsApp id mapped to its record). */
  async function sent(extra: Partial<SendJobData> = {}): Promise<SendJobData> {
    const deviceId = `rt-${Math.random().toString(36).slice(2, 8)}`;
    const job = sendJobData(deviceId, { to: '15551239001', linkGeneration: 0, ...extra });
    expect(await store.claim(job)).to.equal('claimed');
    expect(await store.markSent(job, new Date())).to.equal(true);
    return job;
  }
  async function events(deviceId: string, type: string): Promise<Record<string, unknown>[]> {
    const entries = (await redis.xrange(keys.eventLog(deviceId), '-', '+')) as [string, string[]][];
    return entries
      .filter(([, f]) => f[f.indexOf('type') + 1] === type)
      .map(([, f]) => JSON.parse(f[f.indexOf('data') + 1]!) as Record<string, unknown>);
  }

  it('When a retry receipt names a WhatsApp id that is not ours, then it is answered (Baileys decides) and nothing is written', async () => {
    const job = await sent();
    const outcome = await retries.ask(job.deviceId, 'UNKNOWN0000');
    expect(outcome).to.deep.equal({ known: false, answer: true, undecryptable: false, asked: 0 });
    expect(await retries.answered(job.deviceId, 'UNKNOWN0000')).to.equal(false);
    expect((await store.get(job.deviceId, job.messageId))!.retries).to.equal(undefined);
  });

  it('When a message is asked for and answered, then its record shows the counts and the last time; a record never asked has no retries', async () => {
    const job = await sent();
    expect((await store.get(job.deviceId, job.messageId))!.retries).to.equal(undefined);
    const at = new Date('2026-11-25T10:00:00.000Z');
    expect(await retries.ask(job.deviceId, job.platformMessageId, at)).to.deep.equal({
      known: true,
      answer: true,
      undecryptable: false,
      asked: 1,
    });
    const later = new Date('2026-11-25T10:00:01.000Z');
    expect(await retries.answered(job.deviceId, job.platformMessageId, later)).to.equal(true);
    const record = (await store.get(job.deviceId, job.messageId))!;
    expect(record.retries).to.deep.equal({ asked: 1, answered: 1, lastAt: later.toISOString() });
    expect(record.status).to.equal('sent');
  });

  it('When the asks reach the bound on a sent message, then that ask is still answered, the message is marked undecryptable once with its event, and asks past the bound are refused', async () => {
    const job = await sent({ batchId: 'b-retry' });
    const outcomes = [];
    for (let i = 0; i < MAX + 2; i++) {
      const outcome = await retries.ask(job.deviceId, job.platformMessageId);
      outcomes.push(outcome);
      if (outcome.answer) await retries.answered(job.deviceId, job.platformMessageId);
    }
    expect(outcomes.map((o) => [o.answer, o.undecryptable, o.asked])).to.deep.equal([
      [true, false, 1],
      [true, false, 2],
      [true, true, 3],
      [false, false, 4],
      [false, false, 5],
    ]);
    const record = (await store.get(job.deviceId, job.messageId))!;
    expect(record.status).to.equal('sent');
    expect(record.retries).to.include({ asked: 5, answered: 3 });
    expect(record.retries!.undecryptableAt).to.be.a('string');
    const logged = await events(job.deviceId, 'message.undecryptable');
    expect(logged).to.deep.equal([
      {
        deviceId: job.deviceId,
        messageId: job.messageId,
        batchId: 'b-retry',
        to: job.to,
        contact: { phone: job.to },
        platformMessageId: job.platformMessageId,
        status: 'sent',
        retries: { asked: 3, answered: 2 },
        undecryptableAt: record.retries!.undecryptableAt,
      },
    ]);
  });

  it('When a delivery receipt came first, then the bound marks nothing (some device of the recipient read it) but the asks are still counted', async () => {
    const job = await sent();
    await store.markReceipts(job.deviceId, [
      { platformMessageId: job.platformMessageId, status: 'delivered', at: new Date() },
    ]);
    for (let i = 0; i < MAX; i++) await retries.ask(job.deviceId, job.platformMessageId);
    const record = (await store.get(job.deviceId, job.messageId))!;
    expect(record.status).to.equal('delivered');
    expect(record.retries).to.include({ asked: MAX, answered: 0 });
    expect(record.retries!.undecryptableAt).to.equal(undefined);
    expect(await events(job.deviceId, 'message.undecryptable')).to.deep.equal([]);
  });

  it('When the message was deleted for everyone, then a retry receipt is not answered (its content must not go again)', async () => {
    const job = await sent();
    await store.markDeleted(job, new Date(), false);
    const outcome = await retries.ask(job.deviceId, job.platformMessageId);
    expect(outcome).to.include({ known: true, answer: false, undecryptable: false });
  });

  it('When the webhook wants message.undecryptable, then the event is in its outbox too', async () => {
    const job = await sent();
    await redis.hset(keys.webhook(job.deviceId), {
      url: 'https://hooks.example.test/x',
      events: 'message.undecryptable',
    });
    for (let i = 0; i < MAX; i++) await retries.ask(job.deviceId, job.platformMessageId);
    const outbox = (await redis.xrange(keys.eventOutbox(job.deviceId), '-', '+')) as [string, string[]][];
    expect(outbox.map(([, f]) => [f[f.indexOf('id') + 1], f[f.indexOf('type') + 1]])).to.deep.equal([
      [`${job.messageId}.undecryptable`, 'message.undecryptable'],
    ]);
  });
});
