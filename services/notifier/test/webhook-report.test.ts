import { expect } from 'chai';
import {
  closeRedis,
  createLogger,
  createOutboundClient,
  createRedis,
  parseAllowedPrivateHosts,
  waitForRedis,
  type RedisClient,
} from '@mgw/common';
import { createMetrics } from '@mgw/contracts';
import {
  Encryption,
  WebhookDeliveries,
  WebhookReport,
  WebhookStore,
  publishEvent,
  brokerReportKey,
  webhookDeliveryKeys,
  webhookReportKey,
} from '@mgw/store';
import { WebhookReceiver, waitFor } from '@mgw/testing';
import { DeliveryDispatcher } from '../src/dispatcher.js';
import { OutboxWatcher } from '../src/outbox-watcher.js';
import { TargetCache } from '../src/target-cache.js';

describe('notifier: the webhook report (what the Events tab shows) and "retry now" (real Redis, a receiver on 127.0.0.1)', () => {
  let redis: RedisClient;
  let subscriber: RedisClient;
  let store: WebhookDeliveries;
  let webhooks: WebhookStore;
  let report: WebhookReport;
  let receiver: WebhookReceiver;
  const encryption = Encryption.fromEnv();
  const logger = createLogger({ level: 'silent', service: 'notifier-test' });
  const newDevice = () => `wr-${Math.random().toString(36).slice(2, 8)}`;
  const stops: (() => Promise<void>)[] = [];

  /** A notifier as main.ts builds it (dispatcher + outbox watcher), retries a minute apart. */
  const notifier = async (attempts = 5) => {
    const targets = new TargetCache(webhooks);
    const dispatcher = new DeliveryDispatcher({
      store,
      owner: `n-${Math.random().toString(36).slice(2, 6)}`,
      concurrency: 1,
      retry: { attempts, baseMs: 60_000, maxMs: 120_000 },
      delivery: {
        webhooks,
        targets,
        sealer: encryption,
        outbound: createOutboundClient({
          allowList: parseAllowedPrivateHosts('127.0.0.1'),
          timeoutMs: 2000,
          maxRedirects: 0,
          maxBytes: 65_536,
        }),
        timeoutMs: 2000,
        maxAttempts: attempts,
        metrics: createMetrics(),
        logger,
      },
      logger,
      report,
    });
    // Only the devices of this test: a sweep over every device with a webhook would serve others'.
    const watcher = new OutboxWatcher({
      webhooks: { devices: async () => [] },
      targets,
      dispatcher,
      sweepMs: 60_000,
      logger,
    });
    await watcher.start(subscriber);
    stops.push(async () => {
      await watcher.stop();
      await dispatcher.stop();
    });
    return dispatcher;
  };

  beforeEach(async () => {
    redis = createRedis(process.env.REDIS_URL!, 'worker', 'notifier-test');
    subscriber = createRedis(process.env.REDIS_URL!, 'subscriber', 'notifier-test-sub');
    await waitForRedis(redis);
    store = new WebhookDeliveries(redis);
    webhooks = new WebhookStore(redis, encryption, 0);
    report = new WebhookReport(redis);
    receiver = await WebhookReceiver.start();
  });
  afterEach(async () => {
    await Promise.all(stops.splice(0).map((s) => s()));
    await receiver.close();
    await closeRedis(subscriber);
    await closeRedis(redis);
  });

  const emit = (deviceId: string, seq: number) =>
    publishEvent(redis, deviceId, 'session.status', { status: 'connected', seq });

  it('When an endpoint refuses two events and takes the third, then the report holds the delivery, the failure and the two retries a minute away; "retry now" delivers both at once, in the order they waited in, with their webhook-ids', async () => {
    const deviceId = newDevice();
    await webhooks.set(deviceId, { url: receiver.url });
    let refusing = true;
    receiver.respond = (d) => (refusing && d.body.data.seq !== 2 ? 500 : 200);
    await notifier();
    const before = Date.now();
    for (let seq = 0; seq < 3; seq++) await emit(deviceId, seq);
    await waitFor(() => receiver.accepted().length === 1, { timeoutMs: 10_000, what: 'the third accepted' });
    await waitFor(async () => (await report.read(deviceId)).lastDelivery !== undefined, {
      timeoutMs: 5000,
      what: 'the delivery recorded',
    });
    const ids = receiver.deliveries.map((d) => d.id);
    const failed = await report.read(deviceId);
    expect(failed.lastDelivery).to.deep.include({
      eventId: ids[2],
      status: 200,
      outcome: 'delivered',
      attempt: 1,
    });
    expect(failed.lastFailure).to.deep.include({
      eventId: ids[1],
      status: 500,
      outcome: 'retry',
      attempt: 1,
      error: 'the endpoint answered 500',
    });
    expect(failed.retries.count).to.equal(2);
    const due = Date.parse(failed.retries.nextDueAt!);
    // 60 s ± 20 % after the first attempt.
    expect(due).to.be.within(before + 47_000, Date.now() + 73_000);
    expect(failed.waiting).to.equal(0);
    expect(failed.exhausted).to.equal(0);

    refusing = false;
    // The order they wait in: by due time (jitter may put the later event first).
    const queued = await redis.zrange(webhookDeliveryKeys(deviceId).retries, 0, -1);
    expect([...queued].sort()).to.deep.equal([ids[0], ids[1]].sort());
    const asked = Date.now();
    expect(await report.retryNow(deviceId)).to.deep.equal({ kind: 'done', waiting: 2, madeDue: 2 });
    await waitFor(() => receiver.accepted().length === 3, {
      timeoutMs: 10_000,
      what: 'both retries delivered',
    });
    // Made due at once, not at their 47-73 s: quiet: 100 ms.
    expect(Date.now() - asked).to.be.below(10_000);
    const again = receiver.deliveries.slice(3);
    expect(again.map((d) => [d.id, d.status])).to.deep.equal(queued.map((id) => [id, 200]));
    await waitFor(async () => (await report.read(deviceId)).retries.count === 0, {
      timeoutMs: 5000,
      what: 'the retries settled',
    });
    const after = await report.read(deviceId);
    expect(after.lastDelivery).to.deep.include({ eventId: queued[1], attempt: 2, status: 200 });
    expect(after.retryNow?.count).to.equal(2);
    expect(receiver.deliveries).to.have.length(5);
  });

  it('When "retry now" is asked while the notifier is busy with the device, then the retries go out at once too', async () => {
    const deviceId = newDevice();
    await webhooks.set(deviceId, { url: receiver.url });
    let refusing = true;
    receiver.respond = (d) => (refusing && d.body.data.seq === 0 ? 500 : 200);
    await notifier();
    await emit(deviceId, 0);
    await waitFor(async () => (await report.read(deviceId)).retries.count === 1, {
      timeoutMs: 10_000,
      what: 'the retry waiting',
    });
    refusing = false;
    // A slow endpoint keeps the device's runner busy with later events while the retry is made due.
    receiver.delayMs = 300;
    for (let seq = 1; seq <= 5; seq++) await emit(deviceId, seq);
    await waitFor(() => receiver.arrived >= 2, { timeoutMs: 5000, what: 'the runner busy' });
    await report.retryNow(deviceId);
    await waitFor(() => receiver.accepted().filter((d) => d.body.data.seq === 0).length === 1, {
      timeoutMs: 10_000,
      what: 'the retry delivered',
    });
  });

  it('When an event fails its last attempt, then it counts as dropped; a notifier that lost its lease records nothing; the report goes with the endpoint', async () => {
    const deviceId = newDevice();
    await webhooks.set(deviceId, { url: receiver.url });
    receiver.respond = () => 503;
    await notifier(1);
    await emit(deviceId, 0);
    await waitFor(async () => (await report.read(deviceId)).exhausted === 1, {
      timeoutMs: 10_000,
      what: 'the event dropped',
    });
    const r = await report.read(deviceId);
    expect(r.lastFailure).to.deep.include({ outcome: 'exhausted', status: 503 });
    expect(r.retries.count).to.equal(0);
    expect(await redis.ttl(webhookReportKey(deviceId))).to.be.above(0);

    // A token that holds no lease writes nothing.
    expect(
      await report.record(deviceId, 'gone-notifier:1', {
        at: new Date().toISOString(),
        eventId: 'x',
        type: 'session.status',
        outcome: 'delivered',
        attempt: 1,
        status: 200,
      }),
    ).to.equal(false);
    expect((await report.read(deviceId)).lastDelivery).to.equal(undefined);

    expect(await webhooks.remove(deviceId)).to.equal(true);
    expect(await redis.exists(webhookReportKey(deviceId))).to.equal(0);
    expect(await report.retryNow(deviceId)).to.deep.equal({ kind: 'no_webhook' });
    expect(await redis.exists(webhookDeliveryKeys(deviceId).retries)).to.equal(0);
  });

  it("When a broker publish fails, then the device's report for that transport holds the error, counted, and expires", async () => {
    const deviceId = newDevice();
    expect(await report.brokerReport(deviceId, 'nats')).to.deep.equal({ failures: 0 });
    await report.brokerFailed(
      deviceId,
      'nats',
      'not confirmed within 10000 ms',
      new Date('2026-11-20T10:00:00Z'),
    );
    await report.brokerFailed(deviceId, 'nats', 'x'.repeat(1000), new Date('2026-11-20T10:00:05Z'));
    const r = await report.brokerReport(deviceId, 'nats');
    expect(r).to.deep.include({ lastErrorAt: '2026-11-20T10:00:05.000Z', failures: 2 });
    expect(r.lastError).to.have.length(300);
    expect(await report.brokerReport(deviceId, 'rabbitmq')).to.deep.equal({ failures: 0 });
    expect(await redis.ttl(brokerReportKey(deviceId, 'nats'))).to.be.above(0);
    expect(brokerReportKey(deviceId, 'nats')).to.equal(`mgw:{${deviceId}}:broker:nats:report`);
  });
});
