import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys, newMessageId, newPlatformMessageId, type SendJobData } from '@mgw/contracts';
import {
  BatchStore,
  Encryption,
  MessageStore,
  SessionStore,
  WebhookStore,
  publishSessionStatus,
} from '../src/index.js';

describe('store: events written with the changes they report (real Redis)', () => {
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

  const newDevice = () => `ev-${Math.random().toString(36).slice(2, 8)}`;
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
  async function outbox(
    deviceId: string,
  ): Promise<{ id: string; type: string; data: Record<string, unknown> }[]> {
    const entries = (await redis.xrange(keys.eventOutbox(deviceId), '-', '+')) as [string, string[]][];
    return entries.map(([, f]) => {
      const m: Record<string, string> = {};
      for (let i = 0; i < f.length; i += 2) m[f[i]!] = f[i + 1]!;
      return { id: m.id!, type: m.type!, data: JSON.parse(m.data!) as Record<string, unknown> };
    });
  }

  it('When no webhook is set, then changes write no event', async () => {
    const deviceId = newDevice();
    const j = job(deviceId);
    await messages.claim(j);
    await messages.markSent(j, new Date());
    await new SessionStore(redis).update(deviceId, 'connected');
    expect(await redis.exists(keys.eventOutbox(deviceId))).to.equal(0);
  });

  it('When receipts overtake the sent bookkeeping, then the events still come sent → delivered → read, each once', async () => {
    const deviceId = newDevice();
    await webhooks.set(deviceId, { url: 'https://hooks.example.com/x' });
    const j = job(deviceId);
    await messages.claim(j);
    await messages.markReceipt(deviceId, j.messageId, 'delivered');
    await messages.markReceipt(deviceId, j.messageId, 'read');
    expect(await outbox(deviceId)).to.deep.equal([]);
    await messages.markSent(j, new Date());
    await messages.markSent(j, new Date());
    await messages.markReceipt(deviceId, j.messageId, 'read');
    const events = await outbox(deviceId);
    expect(events.map((e) => e.type)).to.deep.equal(['message.sent', 'message.delivered', 'message.read']);
    expect(events.map((e) => e.id)).to.deep.equal(
      ['sent', 'delivered', 'read'].map((s) => `${j.messageId}.${s}`),
    );
    expect(events[1]!.data).to.include({ deviceId, messageId: j.messageId, status: 'delivered', to: j.to });
  });

  it('When a webhook subscribes to some events, then only those are written; a failed message emits message.failed with its reason', async () => {
    const deviceId = newDevice();
    await webhooks.set(deviceId, { url: 'https://hooks.example.com/x', events: ['message.failed'] });
    const ok = job(deviceId);
    await messages.claim(ok);
    await messages.markSent(ok, new Date());
    const bad = job(deviceId);
    await messages.markFailed(bad, 'not_on_whatsapp');
    const events = await outbox(deviceId);
    expect(events.map((e) => e.type)).to.deep.equal(['message.failed']);
    expect(events[0]!.data).to.include({
      messageId: bad.messageId,
      status: 'failed',
      error: 'not_on_whatsapp',
    });
  });

  it('When an engine reports a sent message failed (the Cloud API), then it fails once with message.failed; a delivered one never does', async () => {
    const deviceId = newDevice();
    await webhooks.set(deviceId, { url: 'https://hooks.example.com/x' });
    const failing = job(deviceId);
    await messages.claim(failing);
    await messages.markSent(failing, new Date());
    expect(await messages.markFailed(failing, 'undeliverable'), 'the linked rule: not after sent').to.equal(
      false,
    );
    expect(await messages.markFailedAfterSent(deviceId, failing.messageId, 'undeliverable')).to.equal(true);
    expect(await messages.markFailedAfterSent(deviceId, failing.messageId, 'window_closed')).to.equal(false);
    expect(await messages.markReceipt(deviceId, failing.messageId, 'read')).to.equal(false);
    const delivered = job(deviceId);
    await messages.claim(delivered);
    await messages.markSent(delivered, new Date());
    await messages.markReceipt(deviceId, delivered.messageId, 'delivered');
    expect(await messages.markFailedAfterSent(deviceId, delivered.messageId, 'undeliverable')).to.equal(
      false,
    );
    expect(await messages.get(deviceId, failing.messageId)).to.include({
      status: 'failed',
      error: 'undeliverable',
    });
    expect(await messages.get(deviceId, delivered.messageId)).to.include({ status: 'delivered' });
    const events = await outbox(deviceId);
    expect(events.map((e) => e.id)).to.deep.equal([
      `${failing.messageId}.sent`,
      `${failing.messageId}.failed`,
      `${delivered.messageId}.sent`,
      `${delivered.messageId}.delivered`,
    ]);
    expect(events[1]!.data).to.include({ status: 'failed', error: 'undeliverable' });
  });

  it('When the messages of a batch settle, then its counts sum to the total and batch.completed is emitted once, after the last message event', async () => {
    const deviceId = newDevice();
    await webhooks.set(deviceId, { url: 'https://hooks.example.com/x' });
    const batchId = newMessageId();
    const jobs = [job(deviceId, batchId), job(deviceId, batchId), job(deviceId, batchId)];
    const multi = redis.multi();
    batches.stage(multi, deviceId, batchId, jobs.length);
    await multi.exec();
    await messages.claim(jobs[0]!);
    await messages.markSent(jobs[0]!, new Date());
    await messages.markFailed(jobs[1]!, 'invalid_number');
    expect((await batches.get(deviceId, batchId))!.completedAt).to.equal(undefined);
    await messages.claim(jobs[2]!);
    await messages.markSent(jobs[2]!, new Date());
    await messages.markReceipt(deviceId, jobs[2]!.messageId, 'read');
    const batch = (await batches.get(deviceId, batchId))!;
    expect(batch.total).to.equal(3);
    expect(batch.counts).to.deep.equal({
      scheduled: 0,
      queued: 0,
      sent: 1,
      delivered: 0,
      read: 1,
      failed: 1,
      deleted: 0,
      held: 0,
    });
    expect(batch.completedAt).to.be.a('string');
    const types = (await outbox(deviceId)).map((e) => e.type);
    expect(types.filter((t) => t === 'batch.completed')).to.have.length(1);
    expect(types.indexOf('batch.completed')).to.equal(types.lastIndexOf('message.sent') + 1);
  });

  it('When the session status changes, then session.status is emitted once per change, and publishSessionStatus adds extra fields', async () => {
    const deviceId = newDevice();
    await webhooks.set(deviceId, { url: 'https://hooks.example.com/x' });
    const sessions = new SessionStore(redis);
    await sessions.update(deviceId, 'connected', { phone: '15550000001', name: 'Shop' });
    await sessions.update(deviceId, 'connected', { name: 'Shop 2' });
    await sessions.markDisconnected(deviceId, 'logged_out');
    await publishSessionStatus(redis, deviceId, 'restricted', {
      reason: 'reachout_timelock',
      until: '2026-11-23T00:00:00.000Z',
    });
    const events = await outbox(deviceId);
    expect(events.map((e) => e.data)).to.deep.equal([
      { deviceId, status: 'connected', phone: '15550000001', name: 'Shop' },
      { deviceId, status: 'disconnected', reason: 'logged_out' },
      { deviceId, status: 'restricted', reason: 'reachout_timelock', until: '2026-11-23T00:00:00.000Z' },
    ]);
  });

  it('When the webhook is rotated, then both secrets sign until the overlap ends, and the secrets are sealed in Redis', async () => {
    const deviceId = newDevice();
    const first = await webhooks.set(deviceId, { url: 'https://hooks.example.com/x' });
    const again = await webhooks.set(deviceId, { url: 'https://hooks.example.com/y' });
    expect(again.secret).to.equal(undefined);
    const rotated = await webhooks.set(deviceId, { url: 'https://hooks.example.com/y', rotateSecret: true });
    const target = (await webhooks.target(deviceId))!;
    expect(target.secrets).to.deep.equal([rotated.secret, first.secret]);
    expect((await webhooks.target(deviceId, Date.now() + 61_000))!.secrets).to.deep.equal([rotated.secret]);
    const raw = JSON.stringify(await redis.hgetall(keys.webhook(deviceId)));
    expect(raw).not.to.include(first.secret!.slice(6)).and.not.to.include(rotated.secret!.slice(6));
    expect(await webhooks.remove(deviceId)).to.equal(true);
    expect(await webhooks.get(deviceId)).to.equal(undefined);
  });
});
