import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import {
  closeRedis,
  createLogger,
  createOutboundClient,
  createRedis,
  parseAllowedPrivateHosts,
  waitForRedis,
  type RedisClient,
} from '@mgw/common';
import { BULL_PREFIX, createMetrics, keys, webhookQueueName, type WebhookJobData } from '@mgw/contracts';
import {
  Encryption,
  EncryptionKey,
  WebhookDeliveries,
  WebhookStore,
  publishEvent,
  webhookDeliveryKeys,
} from '@mgw/store';
import { WebhookReceiver, waitFor } from '@mgw/testing';
import { DeliveryDispatcher } from '../src/dispatcher.js';
import { legacyQueueAdopter } from '../src/legacy-queues.js';
import { TargetCache } from '../src/target-cache.js';

describe('notifier: deliveries under a per-device lease (real Redis, a receiver on 127.0.0.1)', () => {
  let redis: RedisClient;
  let store: WebhookDeliveries;
  let webhooks: WebhookStore;
  let receiver: WebhookReceiver;
  const encryption = Encryption.fromEnv();
  const logger = createLogger({ level: 'silent', service: 'notifier-test' });
  const newDevice = () => `dl-${Math.random().toString(36).slice(2, 8)}`;
  const dispatchers: DeliveryDispatcher[] = [];

  const dispatcher = (owner: string, metrics = createMetrics()) => {
    const d = new DeliveryDispatcher({
      store,
      owner,
      concurrency: 1,
      retry: { attempts: 5, baseMs: 100, maxMs: 200 },
      delivery: {
        webhooks,
        targets: new TargetCache(webhooks),
        sealer: encryption,
        outbound: createOutboundClient({
          allowList: parseAllowedPrivateHosts('127.0.0.1'),
          timeoutMs: 2000,
          maxRedirects: 0,
          maxBytes: 65_536,
        }),
        timeoutMs: 2000,
        maxAttempts: 5,
        metrics,
        logger,
      },
      logger,
      adoptLegacy: legacyQueueAdopter(redis, store, 7000, logger),
    });
    dispatchers.push(d);
    return d;
  };

  beforeEach(async () => {
    redis = createRedis(process.env.REDIS_URL!, 'worker', 'notifier-test');
    await waitForRedis(redis);
    store = new WebhookDeliveries(redis);
    webhooks = new WebhookStore(redis, encryption, 0);
    receiver = await WebhookReceiver.start();
  });
  afterEach(async () => {
    await Promise.all(dispatchers.splice(0).map((d) => d.stop()));
    await receiver.close();
    await closeRedis(redis);
  });

  const emit = (deviceId: string, seq: number) =>
    publishEvent(redis, deviceId, 'session.status', { status: 'connected', seq });

  it('When a lease is taken, then only with work, only by one, and a holder that lost it writes nothing (fencing)', async () => {
    const deviceId = newDevice();
    await webhooks.set(deviceId, { url: receiver.url });
    expect(await store.acquire(deviceId, 'a', 5000)).to.deep.equal({ kind: 'idle' });
    await emit(deviceId, 1);
    const a = await store.acquire(deviceId, 'a', 5000);
    expect(a.kind).to.equal('acquired');
    expect((await store.acquire(deviceId, 'b', 5000)).kind).to.equal('held');
    const [entry] = await store.readOutbox(deviceId, '-', 10);

    // a pauses past its lease; b takes over.
    await redis.pexpire(webhookDeliveryKeys(deviceId).lease, 1);
    await new Promise((r) => setTimeout(r, 10));
    const b = await store.acquire(deviceId, 'b', 5000);
    expect(b.kind).to.equal('acquired');
    const tokenA = (a as { token: string }).token;
    const tokenB = (b as { token: string }).token;
    expect(await store.settle(deviceId, tokenA, 5000, entry!, { done: true })).to.equal(false);
    expect(await redis.xlen(keys.eventOutbox(deviceId))).to.equal(1);
    expect(await store.release(deviceId, tokenA)).to.deep.equal({ kind: 'lost' });

    // Work written before the release keeps the lease; none left gives it back.
    expect(await store.release(deviceId, tokenB)).to.deep.equal({ kind: 'busy' });
    expect(await store.settle(deviceId, tokenB, 5000, entry!, { done: true })).to.equal(true);
    expect(await store.release(deviceId, tokenB)).to.deep.equal({ kind: 'released' });
    expect(await redis.exists(webhookDeliveryKeys(deviceId).lease)).to.equal(0);
  });

  it('When two notifiers serve one device, then its 60 events go out one at a time in emission order', async () => {
    const deviceId = newDevice();
    await webhooks.set(deviceId, { url: receiver.url });
    receiver.delayMs = 3;
    const [one, two] = [dispatcher('one'), dispatcher('two')];
    for (let seq = 0; seq < 60; seq++) {
      await emit(deviceId, seq);
      // Both are woken by every event, as by the outbox notification.
      void one.kick(deviceId);
      void two.kick(deviceId);
    }
    await waitFor(() => receiver.deliveries.length >= 60, { timeoutMs: 20_000, what: '60 deliveries' });
    const got = [...receiver.deliveries].sort((x, y) => x.startedAt - y.startedAt);
    expect(got.map((d) => d.body.data.seq)).to.deep.equal([...Array(60).keys()]);
    for (let i = 1; i < got.length; i++) expect(got[i]!.startedAt).to.be.at.least(got[i - 1]!.endedAt);
    await waitFor(async () => (await redis.exists(webhookDeliveryKeys(deviceId).lease)) === 0, {
      timeoutMs: 5000,
      what: 'the lease given back once idle',
    });
  });

  it('When an attempt fails, then the events after it are not held back and it comes again with the same webhook-id', async () => {
    const deviceId = newDevice();
    await webhooks.set(deviceId, { url: receiver.url });
    let failFirst = 2;
    receiver.respond = (d) => (d.body.data.seq === 0 && failFirst-- > 0 ? 500 : 200);
    const one = dispatcher('one');
    for (let seq = 0; seq < 3; seq++) await emit(deviceId, seq);
    void one.kick(deviceId);
    await waitFor(() => receiver.accepted().length === 3, { timeoutMs: 10_000, what: 'three accepted' });
    const seqs = receiver.deliveries.map((d) => `${d.body.data.seq}:${d.status}`);
    expect(seqs.slice(0, 3)).to.deep.equal(['0:500', '1:200', '2:200']);
    const first = receiver.deliveries.filter((d) => d.body.data.seq === 0);
    expect(first.map((d) => d.status)).to.deep.equal([500, 500, 200]);
    expect(new Set(first.map((d) => d.id)).size).to.equal(1);
    // The retry's bookkeeping goes once its delivery is settled, a moment after the receiver answered.
    const k = webhookDeliveryKeys(deviceId);
    await waitFor(async () => (await redis.zcard(k.retries)) === 0 && (await redis.hlen(k.retryData)) === 0, {
      timeoutMs: 5000,
      what: 'the retry forgotten once delivered',
    });
  });

  it('When an event is sealed under a key the notifier does not have, then it is not attempted (counted unreadable) and the events after it are delivered', async () => {
    const deviceId = newDevice();
    await webhooks.set(deviceId, { url: receiver.url });
    const metrics = createMetrics();
    const one = dispatcher('one', metrics);
    const gone = Encryption.fromConfig({ current: new EncryptionKey('gone', randomBytes(32)), old: [] });
    await emit(deviceId, 0);
    await publishEvent(redis, deviceId, 'session.status', { status: 'connected', seq: 1 }, { sealer: gone });
    await emit(deviceId, 2);
    void one.kick(deviceId);
    await waitFor(() => receiver.accepted().length === 2, { timeoutMs: 10_000, what: 'two accepted' });
    expect(receiver.deliveries.map((d) => d.body.data.seq)).to.deep.equal([0, 2]);
    const outcomes = (await metrics.registry.getSingleMetric('mgw_webhook_deliveries_total')!.get()).values;
    expect(outcomes.find((v) => v.labels.outcome === 'unreadable')?.value).to.equal(1);
    const k = webhookDeliveryKeys(deviceId);
    expect(await redis.zcard(k.retries), 'not scheduled again').to.equal(0);
  });

  it('When a device still has a legacy BullMQ delivery queue, then its jobs are delivered and the queue removed', async () => {
    const deviceId = newDevice();
    await webhooks.set(deviceId, { url: receiver.url });
    const queue = new Queue<WebhookJobData>(webhookQueueName(deviceId), {
      connection: redis,
      prefix: BULL_PREFIX,
    });
    const job = (id: string, seq: number): WebhookJobData => ({
      id,
      type: 'session.status',
      timestamp: new Date().toISOString(),
      data: JSON.stringify({ deviceId, status: 'connected', seq }),
    });
    await queue.add('session.status', job('legacy-0', 0), { jobId: 'legacy-0' });
    await queue.add('session.status', job('legacy-1', 1), { jobId: 'legacy-1', delay: 300 });
    await queue.close();
    await emit(deviceId, 2);
    void dispatcher('one').kick(deviceId);
    await waitFor(() => receiver.accepted().length === 3, { timeoutMs: 10_000, what: 'three accepted' });
    expect(receiver.accepted().map((d) => d.id)).to.include.members(['legacy-0', 'legacy-1']);
    expect(await redis.keys(`${BULL_PREFIX}:${webhookQueueName(deviceId)}:*`)).to.deep.equal([]);
  });
});
