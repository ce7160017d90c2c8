import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys, newMessageId, newPlatformMessageId, type MessageRecord } from '@mgw/contracts';
import { MessageStore, SessionStore } from '../src/index.js';

describe('store: message and session records (real Redis)', () => {
  let redis: Redis;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(() => redis.quit());

  async function queued(store: MessageStore): Promise<MessageRecord> {
    const r: MessageRecord = {
      messageId: newMessageId(),
      deviceId: 'dev1',
      to: '15551234567',
      status: 'queued',
      kind: 'send',
      platformMessageId: newPlatformMessageId(),
      createdAt: new Date().toISOString(),
    };
    const multi = redis.multi();
    store.addQueued(multi, [r]);
    await multi.exec();
    return r;
  }

  it('When receipts arrive out of order, then the status only moves forward', async () => {
    const store = new MessageStore(redis, 60);
    const r = await queued(store);
    expect(await store.markSent('dev1', r.messageId, new Date())).to.equal(true);
    expect(await store.markReceipt('dev1', r.messageId, 'read')).to.equal(true);
    expect(await store.markReceipt('dev1', r.messageId, 'delivered')).to.equal(false);
    const got = await store.get('dev1', r.messageId);
    expect(got?.status).to.equal('read');
    expect(got?.sentAt).to.be.a('string');
    expect(await store.findByPlatformId('dev1', r.platformMessageId)).to.equal(r.messageId);
    expect(await redis.ttl(keys.message('dev1', r.messageId))).to.be.within(1, 60);
  });

  it('When a delivery receipt overtakes the sender marking the message sent, then the record keeps delivered and gets its sentAt', async () => {
    const store = new MessageStore(redis, 60);
    const r = await queued(store);
    expect(await store.markReceipt('dev1', r.messageId, 'delivered')).to.equal(true);
    const sentAt = new Date();
    expect(await store.markSent('dev1', r.messageId, sentAt)).to.equal(true);
    expect(await store.get('dev1', r.messageId)).to.include({
      status: 'delivered',
      sentAt: sentAt.toISOString(),
    });
    expect(await store.markSent('dev1', r.messageId, new Date(0))).to.equal(false); // sentAt is not overwritten
  });

  it('When a sent message is later marked failed, then it stays sent; a failed one stays failed', async () => {
    const store = new MessageStore(redis, 60);
    const a = await queued(store);
    await store.markSent('dev1', a.messageId, new Date());
    expect(await store.markFailed('dev1', a.messageId, 'x')).to.equal(false);
    const b = await queued(store);
    expect(await store.markFailed('dev1', b.messageId, 'logged_out')).to.equal(true);
    expect(await store.markSent('dev1', b.messageId, new Date())).to.equal(false);
    expect((await store.get('dev1', b.messageId))?.error).to.equal('logged_out');
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
