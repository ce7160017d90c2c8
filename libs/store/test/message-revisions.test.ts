import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys, newMessageId, newPlatformMessageId, type SendJobData } from '@mgw/contracts';
import {
  BatchStore,
  Encryption,
  InboundStore,
  MessageRevisions,
  MessageStore,
  WebhookStore,
} from '../src/index.js';

describe('store: deleted messages and edits (real Redis)', () => {
  let redis: Redis;
  let messages: MessageStore;
  let batches: BatchStore;
  let webhooks: WebhookStore;
  let revisions: MessageRevisions;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    messages = new MessageStore(redis, 60);
    batches = new BatchStore(redis, 60);
    webhooks = new WebhookStore(redis, Encryption.fromEnv(), 60);
    revisions = new MessageRevisions(redis, Encryption.fromEnv(), 60);
  });
  after(async () => {
    await redis.quit();
  });

  const newDevice = () => `rev-${Math.random().toString(36).slice(2, 8)}`;
  const job = (deviceId: string, batchId?: string): SendJobData => ({
    kind: 'send',
    messageId: newMessageId(),
    platformMessageId: newPlatformMessageId(),
    deviceId,
    to: '15551230001',
    contentId: newMessageId(),
    linkGeneration: 0,
    enqueuedAt: Date.now(),
    ...(batchId ? { batchId } : {}),
  });
  const types = async (deviceId: string) =>
    ((await redis.xrange(keys.eventOutbox(deviceId), '-', '+')) as [string, string[]][]).map(
      ([, f]) => f[f.indexOf('type') + 1],
    );

  it('When a queued message of a batch is deleted, then it is final, never claimed, counted deleted, and the batch completes', async () => {
    const deviceId = newDevice();
    await webhooks.set(deviceId, { url: 'https://hooks.example.com/x' });
    const batchId = newMessageId();
    const [sent, queued] = [job(deviceId, batchId), job(deviceId, batchId)];
    const multi = redis.multi();
    batches.stage(multi, deviceId, batchId, 2);
    await multi.exec();
    await messages.claim(sent);
    await messages.markSent(sent, new Date());
    expect(await messages.markDeleted(queued, new Date(), true)).to.equal('expired');
    expect(await messages.claim(queued)).to.equal('deleted');
    // Nothing moves it again: not a late failure, not a second delete.
    expect(await messages.markFailed(queued, 'send_failed')).to.equal(false);
    expect(await messages.markDeleted(queued, new Date(), true)).to.equal('final');
    const record = (await messages.getRecord(deviceId, queued.messageId))!;
    expect(record.status).to.equal('deleted');
    expect(record.deletedAt).to.be.a('string');
    const batch = (await batches.get(deviceId, batchId))!;
    expect(batch.counts).to.include({ sent: 1, deleted: 1, queued: 0 });
    expect(batch.completedAt).to.be.a('string');
    expect(await types(deviceId)).to.deep.equal(['message.sent', 'message.deleted', 'batch.completed']);
  });

  it('When a message is being sent (claimed), then a delete as unsent is refused; once sent it is deleted, and receipts no longer move it', async () => {
    const deviceId = newDevice();
    const j = job(deviceId);
    await messages.claim(j);
    expect(await messages.markDeleted(j, new Date(), true)).to.equal('claimed');
    await messages.markSent(j, new Date());
    expect(await messages.markDeleted(j, new Date(), false)).to.equal('expired');
    expect(await messages.markReceipt(deviceId, j.messageId, 'read')).to.equal(false);
    expect(await messages.claim(j)).to.equal('sent');
    expect((await messages.getRecord(deviceId, j.messageId))!.status).to.equal('deleted');
  });

  it('When a text is edited twice, then the history is kept in order, sealed, and an edit of a deleted or another chat’s message is refused', async () => {
    const deviceId = newDevice();
    await webhooks.set(deviceId, { url: 'https://hooks.example.com/x' });
    const j = job(deviceId);
    await messages.claim(j);
    await messages.markSent(j, new Date());
    const edit = (text: string, at: number, phone = j.to, editId = newPlatformMessageId()) =>
      revisions.recordEdit({
        deviceId,
        messageId: j.messageId,
        platformMessageId: j.platformMessageId,
        direction: 'outbound',
        phone,
        editId,
        text,
        at: new Date(at),
      });
    const now = Date.now();
    expect(await edit('first edit', now)).to.equal(true);
    expect(await edit('second edit', now + 1000)).to.equal(true);
    expect(await edit('not their chat', now + 2000, '15559999999')).to.equal(false);
    const view = await revisions.view(deviceId, j.messageId);
    expect(view.text).to.equal('second edit');
    expect(view.edits!.map((e) => e.text)).to.deep.equal(['first edit', 'second edit']);
    const raw = JSON.stringify(await redis.hgetall(keys.message(deviceId, j.messageId)));
    expect(raw).not.to.include('first edit');
    expect(JSON.stringify(await redis.xrange(keys.eventOutbox(deviceId), '-', '+'))).not.to.include(
      'first edit',
    );
    expect(await types(deviceId)).to.deep.equal(['message.sent', 'message.edited', 'message.edited']);
    await messages.markDeleted(j, new Date(), false);
    expect(await edit('after delete', now + 3000)).to.equal(false);
  });

  it('When a contact known only by its LID edits and deletes its message, then its LID is matched; another LID or a phone is refused', async () => {
    const deviceId = newDevice();
    const inbound = new InboundStore(redis, Encryption.fromEnv(), 60);
    const lid = '123456789012345@lid';
    const platformMessageId = newPlatformMessageId();
    const messageId = (await inbound.record(deviceId, {
      platformMessageId,
      contact: { lid },
      text: 'draft',
      receivedAt: new Date(),
    }))!;
    const edit = (who: { phone?: string; lid?: string }) =>
      revisions.recordEdit({
        deviceId,
        messageId,
        platformMessageId,
        direction: 'inbound',
        ...who,
        editId: newPlatformMessageId(),
        text: 'edited',
        at: new Date(),
      });
    expect(await edit({ lid: '999999999999999@lid' }), 'another LID').to.equal(false);
    expect(await edit({ phone: '15551230009' }), 'a phone').to.equal(false);
    expect(await edit({ lid })).to.equal(true);
    expect(
      await revisions.recordInboundDelete(
        deviceId,
        messageId,
        platformMessageId,
        { phone: '15551230009' },
        new Date(),
      ),
    ).to.equal(false);
    expect(
      await revisions.recordInboundDelete(deviceId, messageId, platformMessageId, { lid }, new Date()),
    ).to.equal(true);
    expect((await revisions.view(deviceId, messageId)).deletedAt).to.be.a('string');
  });

  it('When an inbound message carries a messageSecret, then its record keeps it sealed (under its own record and field), reads it back with the writer’s JIDs, and drops it when the contact deletes the message', async () => {
    const deviceId = newDevice();
    const inbound = new InboundStore(redis, Encryption.fromEnv(), 60);
    const secret = Buffer.alloc(32, 0x5a);
    const platformMessageId = newPlatformMessageId();
    const contact = { phone: '15551230010', lid: '123456789012346@lid' };
    const messageId = (await inbound.record(deviceId, {
      platformMessageId,
      from: contact.phone,
      contact,
      text: 'draft',
      receivedAt: new Date(),
      messageSecret: secret,
    }))!;
    const key = keys.message(deviceId, messageId);
    const sealed = (await redis.hget(key, 'msgSecret'))!;
    expect(sealed).to.not.include(secret.toString('base64'));
    expect(await redis.ttl(key)).to.be.within(1, 60);
    expect(await revisions.inboundSecret(deviceId, messageId)).to.deep.equal({
      secret,
      senderJids: ['15551230010@s.whatsapp.net', '123456789012346@lid'],
    });
    // Sealed for this record's field: copied to another record it does not open.
    const other = (await inbound.record(deviceId, {
      platformMessageId: newPlatformMessageId(),
      contact,
      text: 'other',
      receivedAt: new Date(),
    }))!;
    expect(await revisions.inboundSecret(deviceId, other)).to.equal(undefined);
    await redis.hset(keys.message(deviceId, other), 'msgSecret', sealed);
    await revisions.inboundSecret(deviceId, other).then(
      () => expect.fail('opened elsewhere'),
      (err: Error) => expect(err).to.be.an('error'),
    );
    expect(
      await revisions.recordInboundDelete(deviceId, messageId, platformMessageId, contact, new Date()),
    ).to.equal(true);
    expect(await redis.hexists(key, 'msgSecret')).to.equal(0);
    expect(await revisions.inboundSecret(deviceId, messageId)).to.equal(undefined);
  });
});
