import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { EVENT_LOG_MAX_EVENTS, keys, newMessageId, newPlatformMessageId } from '@mgw/contracts';
import {
  Encryption,
  EncryptionKey,
  EventLog,
  InboundStore,
  MessageStore,
  WebhookStore,
  compareStreamIds,
  publishEvent,
} from '../src/index.js';

const HOUR = 3_600_000;

describe('store: the event log, every event retained for GET /events (real Redis)', () => {
  let redis: Redis;
  let log: EventLog;
  let webhooks: WebhookStore;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    log = new EventLog(redis, Encryption.fromEnv(), 24 * HOUR);
    webhooks = new WebhookStore(redis, Encryption.fromEnv(), 60);
  });
  after(async () => {
    await redis.quit();
  });

  const newDevice = () => `elog-${Math.random().toString(36).slice(2, 8)}`;
  const entries = async (key: string) => (await redis.xrange(key, '-', '+')) as [string, string[]][];

  it('When events are emitted without a webhook, then the log has them all and the outbox none', async () => {
    const deviceId = newDevice();
    expect(await publishEvent(redis, deviceId, 'session.status', { status: 'connected' })).to.equal(false);
    const messages = new MessageStore(redis, 60);
    const job = {
      kind: 'send' as const,
      messageId: newMessageId(),
      platformMessageId: newPlatformMessageId(),
      deviceId,
      to: '15551230001',
      contentId: newMessageId(),
      linkGeneration: 0,
      enqueuedAt: Date.now(),
    };
    await messages.claim(job);
    await messages.markSent(job, new Date());
    expect(await redis.exists(keys.eventOutbox(deviceId))).to.equal(0);
    const page = await log.read(deviceId, { limit: 100 });
    expect(page.events.map((e) => e.type)).to.deep.equal(['session.status', 'message.sent']);
    expect(page.events[1]!.data).to.include({ deviceId, messageId: job.messageId, status: 'sent' });
    expect(page.nextCursor).to.equal(page.events[1]!.cursor);
    expect(page.truncated).to.equal(undefined);
  });

  it('When a webhook wants some events, then the outbox gets those, the log every one, with the same fields', async () => {
    const deviceId = newDevice();
    await webhooks.set(deviceId, { url: 'https://hooks.example.com/x', events: ['message.failed'] });
    expect(await publishEvent(redis, deviceId, 'session.status', { status: 'connected' })).to.equal(false);
    expect(
      await publishEvent(redis, deviceId, 'message.failed', { messageId: 'm1' }, { id: 'e-1' }),
    ).to.equal(true);
    const outbox = await entries(keys.eventOutbox(deviceId));
    const logged = await entries(keys.eventLog(deviceId));
    expect(outbox).to.have.length(1);
    expect(logged).to.have.length(2);
    expect(logged[1]![1]).to.deep.equal(outbox[0]![1]);
  });

  it('When a received message is logged, then its text is sealed at rest and opened by the reader', async () => {
    const deviceId = newDevice();
    const inbound = new InboundStore(redis, Encryption.fromEnv(), 60);
    const text = `secret words ${Math.random()}`;
    await inbound.record(deviceId, {
      platformMessageId: newPlatformMessageId(),
      contact: { phone: '15551230002' },
      text,
      receivedAt: new Date(),
    });
    const raw = JSON.stringify(await entries(keys.eventLog(deviceId)));
    expect(raw).to.include('"sealed","1"');
    expect(raw).not.to.include('secret words');
    const page = await log.read(deviceId, { limit: 10 });
    expect(page.events).to.have.length(1);
    expect(page.events[0]!.type).to.equal('message.received');
    expect(page.events[0]!.data).to.include({ text });
  });

  it('When the log is read a page at a time with a type filter, then each wanted event comes once, in order', async () => {
    const deviceId = newDevice();
    for (let i = 0; i < 25; i++)
      await publishEvent(redis, deviceId, i % 2 ? 'message.failed' : 'session.status', { n: i });
    const seen: number[] = [];
    let after: string | undefined;
    for (let round = 0; round < 10; round++) {
      const page = await log.read(deviceId, { after, limit: 4, types: ['message.failed'] });
      seen.push(...page.events.map((e) => (e.data as { n: number }).n));
      if (page.events.length === 0) break;
      after = page.nextCursor!;
    }
    expect(seen).to.deep.equal([1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23]);
  });

  it('When a device emits beyond EVENT_LOG_MAX_EVENTS, then its log stays about that long', async function () {
    this.timeout(60_000);
    const deviceId = newDevice();
    const key = keys.eventLog(deviceId);
    const pipe = redis.pipeline();
    for (let i = 0; i < EVENT_LOG_MAX_EVENTS + 500; i++)
      pipe.xadd(key, '*', 'id', `e${i}`, 'type', 'session.status', 'ts', '', 'data', '{}', 'sealed', '0');
    await pipe.exec();
    await publishEvent(redis, deviceId, 'session.status', { status: 'connected' });
    const len = await redis.xlen(key);
    // Approximate trim: whole stream nodes (100 entries each by default) go, so a node's worth may stay.
    expect(len).to.be.at.most(EVENT_LOG_MAX_EVENTS + 100);
    expect(len).to.be.at.least(EVENT_LOG_MAX_EVENTS);
    await redis.del(key);
  });

  it('When events are older than the retention window, then the trim cuts them, the reader skips them and an old cursor is truncated', async () => {
    const deviceId = newDevice();
    const key = keys.eventLog(deviceId);
    const now = Date.now();
    const old = now - 25 * HOUR;
    // 300 expired entries (three stream nodes: the approximate trim removes whole ones), then a fresh one.
    const pipe = redis.pipeline();
    for (let i = 1; i <= 300; i++)
      pipe.xadd(
        key,
        `${old}-${i}`,
        'id',
        `old-${i}`,
        'type',
        'session.status',
        'ts',
        '',
        'data',
        '{}',
        'sealed',
        '0',
      );
    await pipe.exec();
    await publishEvent(redis, deviceId, 'session.status', { status: 'fresh' });

    // Before any trim the reader already answers from the window alone.
    const first = await log.read(deviceId, { limit: 10 }, now);
    expect(first.events.map((e) => (e.data as { status: string }).status)).to.deep.equal(['fresh']);
    const stale = await log.read(deviceId, { after: `${old}-5`, limit: 10 }, now);
    expect(stale.truncated).to.equal(true);
    expect(stale.events.map((e) => e.id)).to.deep.equal([first.events[0]!.id]);

    expect(await log.trim([deviceId], now)).to.be.at.least(200);
    const left = await entries(key);
    expect(left.filter(([id]) => compareStreamIds(id, `${now - 24 * HOUR}-0`) < 0).length).to.be.below(100);
    // A cursor the trim passed over is truncated too (Redis remembers the greatest id it deleted).
    const trimmed = await log.read(deviceId, { after: `${old}-1`, limit: 10 }, now);
    expect(trimmed.truncated).to.equal(true);
    expect(trimmed.events.map((e) => e.id)).to.deep.equal([first.events[0]!.id]);
    // The fresh event's own cursor is not.
    const current = await log.read(deviceId, { after: first.events[0]!.cursor, limit: 10 }, now);
    expect(current).to.deep.equal({ events: [], nextCursor: first.events[0]!.cursor });
  });

  it('When a device has no log, then a read answers no events and keeps the cursor', async () => {
    const deviceId = newDevice();
    expect(await log.read(deviceId, { limit: 10 })).to.deep.equal({ events: [], nextCursor: null });
    const after = `${Date.now()}-0`;
    expect(await log.read(deviceId, { after, limit: 10 })).to.deep.equal({ events: [], nextCursor: after });
  });

  it('When an event is sealed under a key no longer configured, then reads pass over it with truncated, say which, and go on past it', async () => {
    const deviceId = newDevice();
    const told: { id: string; problem: string }[] = [];
    const reader = new EventLog(redis, Encryption.fromEnv(), 24 * HOUR, (d, e) => {
      expect(d).to.equal(deviceId);
      told.push({ id: e.id, problem: e.problem });
    });
    const gone = Encryption.fromConfig({ current: new EncryptionKey('gone', randomBytes(32)), old: [] });
    await publishEvent(redis, deviceId, 'group.updated', { seq: 1 }, { sealer: Encryption.fromEnv() });
    await publishEvent(redis, deviceId, 'group.updated', { seq: 2 }, { sealer: gone, id: 'evt-unreadable' });
    await publishEvent(redis, deviceId, 'message.sent', { seq: 3 });

    const page = await reader.read(deviceId, { limit: 10 });
    expect(page.events.map((e) => (e.data as { seq: number }).seq)).to.deep.equal([1, 3]);
    expect(page.truncated).to.equal(true);
    expect(told).to.deep.equal([{ id: 'evt-unreadable', problem: 'unknown_key' }]);
    // A reader one event at a time is not held at it either.
    const first = await reader.read(deviceId, { limit: 1 });
    const second = await reader.read(deviceId, { limit: 1, after: first.nextCursor! });
    expect(second.events.map((e) => (e.data as { seq: number }).seq)).to.deep.equal([3]);
    expect(second.truncated).to.equal(true);
  });
});
