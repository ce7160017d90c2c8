import { PassThrough } from 'node:stream';
import { expect } from 'chai';
import { closeRedis, createLogger, createRedis, waitForRedis, type RedisClient } from '@mgw/common';
import { createMetrics, keys, type EventType } from '@mgw/contracts';
import { BrokerSettingsStore, Encryption, publishEvent, WebhookReport } from '@mgw/store';
import {
  freePort,
  startRedisServer,
  startSqsServer,
  waitFor,
  type RedisServerHandle,
  type SqsServerHandle,
} from '@mgw/testing';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { BrokerConfig } from '../../src/brokers/broker-config.js';
import { startBrokerRelays, type BrokerRelays } from '../../src/brokers/broker-relays.js';
import { orderAndCompleteness } from './readers.js';
import { counterReaches, relayMetric } from './relay-metrics.js';
import { SqsDenyProxy } from './sqs-deny-proxy.js';
import { createQueue, sqsClient, SqsReader, type SqsReceived } from './sqs-reader.js';

/**
 * The broker relay to Amazon SQS against a real SQS-protocol server: fauxqs (npm), started here
 * on a free port with its messages on disk (`libs/testing` startSqsServer; a server that cannot
 * start fails the test with its reason), a private redis-server, and events written by the real
 * emit script (`publishEvent` → `mgw_emit`).
 */
describe('notifier: broker relay to Amazon SQS (a real SQS-protocol server)', function () {
  this.timeout(120_000);
  let sqs: SqsServerHandle;
  let client: SQSClient;
  let redisServer: RedisServerHandle;
  let redis: RedisClient;
  const open: { relays?: BrokerRelays; subs: RedisClient[]; readers: SqsReader[] } = {
    subs: [],
    readers: [],
  };
  const silent = createLogger({ level: 'silent', service: 'sqs-test' });
  const uid = () => Math.random().toString(36).slice(2, 8);

  before(async () => {
    [sqs, redisServer] = await Promise.all([startSqsServer(), startRedisServer({ stopWithParent: true })]);
    client = sqsClient(sqs);
    redis = createRedis(redisServer.url, 'worker', 'sqs-test');
    await waitForRedis(redis);
  });
  after(async () => {
    client?.destroy();
    await closeRedis(redis);
    await Promise.all([sqs?.stop(), redisServer?.stop()]);
  });
  afterEach(async () => {
    await open.relays?.stop();
    open.relays = undefined;
    await Promise.all(open.readers.splice(0).map((r) => r.close()));
    await closeRedis(...open.subs.splice(0));
  });

  /**
   * Starts one notifier's SQS relay on `queueUrl` (its requests to `endpoint`, else the URL's
   * host); `connected` false: SQS is not expected to answer.
   */
  async function relays(
    queueUrl: string,
    o: { logger?: typeof silent; connected?: boolean; endpoint?: string } = {},
  ) {
    const metrics = createMetrics();
    const config: BrokerConfig = {
      sqs: { queueUrl, region: sqs.region, endpoint: o.endpoint ?? new URL(queueUrl).origin },
      batch: 200,
      sweepMs: 500,
      retryMs: 200,
    };
    const r = (await startBrokerRelays({
      config,
      redis,
      subscriber: () => {
        const s = createRedis(redisServer.url, 'subscriber', 'sqs-test-sub');
        open.subs.push(s);
        return s;
      },
      sealer: Encryption.fromEnv(),
      owner: `notifier-${uid()}`,
      metrics,
      logger: o.logger ?? silent,
      sqsCredentials: sqs.credentials,
    }))!;
    open.relays = r;
    if (o.connected !== false)
      await waitFor(() => r.relays.every((x) => x.connected), { timeoutMs: 20_000, what: 'SQS reachable' });
    return { relays: r, metrics };
  }

  /** Creates the queue `name` and a consumer reading it. */
  async function queue(name: string) {
    const url = await createQueue(client, sqs, name);
    const reader = new SqsReader(client, url);
    reader.start();
    open.readers.push(reader);
    return { url, reader };
  }

  const metricValue = (metrics: ReturnType<typeof createMetrics>, name: string) =>
    relayMetric(metrics, name, 'sqs');

  const optIn = (deviceId: string, events?: EventType[]) =>
    new BrokerSettingsStore(redis).set(deviceId, { sqs: { enabled: true, ...(events ? { events } : {}) } });

  it('When devices opt in on a FIFO queue, then each event arrives once with MessageGroupId = device, MessageDeduplicationId = event id, the webhook body and its attributes; a device that did not opt in gets nothing, one that picked types only those', async () => {
    const { url, reader } = await queue(`ev-${uid()}.fifo`);
    const { metrics } = await relays(url);
    const devices = [`f1-${uid()}`, `f_2-${uid()}`];
    const [silentDevice, picky] = [`none-${uid()}`, `picky-${uid()}`];
    for (const d of devices) await optIn(d);
    await optIn(picky, ['message.read']);
    const sent: { deviceId: string; id: string; type: EventType; seq: number }[] = [];
    const types: EventType[] = ['message.sent', 'message.delivered', 'message.read'];
    for (let seq = 1; seq <= 25; seq++)
      for (const deviceId of [...devices, silentDevice, picky]) {
        const id = `evt-${uid()}-${seq}`;
        const type = types[seq % types.length]!;
        await publishEvent(redis, deviceId, type, { seq }, { id });
        sent.push({ deviceId, id, type, seq });
      }
    const wanted = sent.filter(
      (s) => devices.includes(s.deviceId) || (s.deviceId === picky && s.type === 'message.read'),
    );
    await waitFor(() => reader.received.length >= wanted.length, { timeoutMs: 30_000, what: 'SQS messages' });
    // Everything the relay read is behind its cursor (the device that did not opt in too) before
    // the count is checked: nothing more can come.
    await waitFor(
      async () =>
        (
          await Promise.all(
            [...devices, silentDevice, picky].map((d) => redis.hget(keys.brokerCursor(d, 'sqs'), 'ord')),
          )
        ).every((ord) => ord === '25'),
      { what: 'every cursor at the end of its log' },
    );
    expect(reader.received).to.have.length(wanted.length);
    const byId = new Map(reader.received.map((g) => [g.id, g]));
    for (const s of wanted) {
      const g = byId.get(s.id)!;
      expect(g, s.id).to.not.equal(undefined);
      expect(g.groupId).to.equal(s.deviceId);
      expect(g.dedupId).to.equal(s.id);
      expect(g.attributes).to.deep.equal({
        'mgw-event-id': s.id,
        'mgw-event-type': s.type,
        'mgw-device-id': s.deviceId,
      });
      expect(g.body.type).to.equal(s.type);
      expect(g.body.data).to.deep.equal({ deviceId: s.deviceId, seq: s.seq });
      expect(Date.parse(g.body.timestamp)).to.be.closeTo(Date.now(), 60_000);
    }
    for (const d of devices)
      expect(orderAndCompleteness(reader.received, d, 25)).to.deep.equal({ duplicates: 0, problems: [] });
    expect(reader.received.filter((g) => g.groupId === silentDevice)).to.deep.equal([]);
    await counterReaches(metrics, 'mgw_broker_published_total', 'sqs', wanted.length);
    expect(await metricValue(metrics, 'mgw_broker_connected')).to.equal(1);
  });

  it('When the queue is a standard one, then every event of an opted-in device arrives (at least once) with its attributes and body, and no group or deduplication id', async () => {
    const { url, reader } = await queue(`std-${uid()}`);
    await relays(url);
    const d = `std-${uid()}`;
    await optIn(d);
    for (let seq = 1; seq <= 120; seq++) await publishEvent(redis, d, 'message.delivered', { seq });
    await waitFor(
      () => orderAndCompleteness(reader.received, d, 120).problems.every((p) => !p.includes('missing')),
      {
        timeoutMs: 30_000,
        what: 'the 120 events',
      },
    );
    for (const g of reader.received) {
      expect(g.groupId).to.equal(undefined);
      expect(g.dedupId).to.equal(undefined);
      expect(g.attributes['mgw-device-id']).to.equal(d);
      expect(g.body.type).to.equal('message.delivered');
    }
  });

  it('When SQS is killed (SIGKILL) mid-stream and restarted on the same port, then every event reaches it at least once, in order per device, none lost; the gauges said it was down meanwhile', async () => {
    const { url, reader } = await queue(`kill-${uid()}.fifo`);
    const { relays: r, metrics } = await relays(url);
    const devices = [`k1-${uid()}`, `k2-${uid()}`, `k3-${uid()}`];
    for (const d of devices) await optIn(d);
    const perDevice = 600;
    let written = 0;
    const writer = (async () => {
      for (let seq = 1; seq <= perDevice; seq++) {
        await Promise.all(devices.map((d) => publishEvent(redis, d, 'message.delivered', { seq })));
        written++;
        if (seq % 20 === 0) await new Promise((res) => setTimeout(res, 10));
      }
    })();
    await waitFor(() => written >= perDevice / 3, { what: 'a third written' });
    await sqs.kill();
    await waitFor(() => !r.relays[0]!.connected, { what: 'the relay to see SQS gone' });
    await new Promise((res) => setTimeout(res, 1000));
    r.collect();
    expect(await metricValue(metrics, 'mgw_broker_connected')).to.equal(0);
    expect(await metricValue(metrics, 'mgw_broker_backlog_events')).to.be.greaterThan(0);
    expect(await metricValue(metrics, 'mgw_broker_oldest_pending_seconds')).to.be.greaterThan(0.5);
    await sqs.restart();
    await writer;

    const total = devices.length * perDevice;
    let got: SqsReceived[] = [];
    await waitFor(
      () => {
        got = reader.received;
        return devices.every((d) => orderAndCompleteness(got, d, perDevice).problems.length === 0);
      },
      { timeoutMs: 60_000, intervalMs: 500, what: `all ${total} events on SQS` },
    ).catch(() => {
      throw new Error(
        devices.map((d) => orderAndCompleteness(got, d, perDevice).problems.join('; ')).join(' | '),
      );
    });
    const dups = devices.reduce((a, d) => a + orderAndCompleteness(got, d, perDevice).duplicates, 0);
    console.log(
      `      sqs: ${total} events, ${got.length} received, ${dups} redelivered copies, 0 lost, order kept`,
    );
    expect(await metricValue(metrics, 'mgw_broker_lost_events_total')).to.equal(0);
    await waitFor(
      async () => {
        r.collect();
        return (await metricValue(metrics, 'mgw_broker_backlog_events')) === 0;
      },
      { timeoutMs: 10_000, what: 'the sqs backlog gauge back to 0' },
    );
    expect(await metricValue(metrics, 'mgw_broker_connected')).to.equal(1);
    expect(await metricValue(metrics, 'mgw_broker_oldest_pending_seconds')).to.equal(0);
  });

  it('When the queue is missing and a device that had not opted in logs events, then opts in, then the queue is created: only the events logged after the opt-in reach it', async () => {
    const name = `late-${uid()}.fifo`;
    const { relays: r } = await relays(sqs.queueUrl(name), { connected: false });
    const d = `late-${uid()}`;
    for (let seq = 1; seq <= 5; seq++) await publishEvent(redis, d, 'message.sent', { seq });
    await optIn(d);
    for (let seq = 6; seq <= 8; seq++) await publishEvent(redis, d, 'message.sent', { seq });
    expect(r.relays[0]!.connected).to.equal(false);
    const { reader } = await queue(name);
    await waitFor(async () => (await redis.hget(keys.brokerCursor(d, 'sqs'), 'ord')) === '8', {
      timeoutMs: 30_000,
      what: 'the cursor past the 8 events',
    });
    await waitFor(() => reader.received.some((m) => m.body.data.seq === 8), { what: 'the last event' });
    await new Promise((res) => setTimeout(res, 500));
    const seqs = reader.received.filter((m) => m.body.data.deviceId === d).map((m) => m.body.data.seq);
    expect(seqs).to.deep.equal([6, 7, 8]);
  });

  it('When SQS is unreachable, then the relay says so (connected 0, a warning) and the logs hold neither the secret key nor the access key', async () => {
    const out = new PassThrough();
    let logs = '';
    out.on('data', (b: Buffer) => (logs += b.toString()));
    const logger = createLogger({ level: 'debug', service: 'sqs-secrets', stream: out });
    const dead = `http://127.0.0.1:${await freePort()}/000000000000/gone.fifo`;
    const { relays: r, metrics } = await relays(dead, { logger, connected: false });
    const d = `dead-${uid()}`;
    await optIn(d);
    await publishEvent(redis, d, 'message.sent', { seq: 1 });
    await waitFor(() => logs.includes('sqs unreachable'), { what: 'the warning' });
    r.collect();
    expect(await metricValue(metrics, 'mgw_broker_connected')).to.equal(0);
    expect(logs).to.include('gone.fifo');
    expect(logs).to.not.include(sqs.credentials.secretAccessKey);
    expect(logs).to.not.include(sqs.credentials.accessKeyId);
  });

  it('When the queue answers but SendMessageBatch is denied (AccessDenied from a proxy in front of fauxqs, which enforces no policy), then SQS stays connected (the gauge never flips), the device retries at EVENTS_BROKER_RETRY_MS, one warning per 10 s, its last error is the denial; once allowed, its events arrive', async () => {
    const proxy = await SqsDenyProxy.start(sqs.endpoint);
    try {
      const out = new PassThrough();
      let logs = '';
      out.on('data', (b: Buffer) => (logs += b.toString()));
      const logger = createLogger({ level: 'debug', service: 'sqs-denied', stream: out });
      const { url, reader } = await queue(`denied-${uid()}.fifo`);
      proxy.deny.add('SendMessageBatch');
      const { relays: r, metrics } = await relays(url, { logger, endpoint: proxy.endpoint });
      const d = `denied-${uid()}`;
      await optIn(d);
      for (let seq = 1; seq <= 5; seq++) await publishEvent(redis, d, 'message.sent', { seq });
      await waitFor(() => (proxy.denied.get('SendMessageBatch') ?? 0) > 0, { what: 'a denied publish' });
      const failuresAt = await metricValue(metrics, 'mgw_broker_publish_failures_total');
      const started = Date.now();
      // The gauge every 20 ms while five more publishes are denied (retried, not given up; an event
      // to wait for, where a fixed 2 s window fits fewer on a loaded host): connected means the
      // queue answers, and it does.
      const gauge = new Set<number>();
      let failures = 0;
      await waitFor(
        async () => {
          gauge.add(await metricValue(metrics, 'mgw_broker_connected'));
          expect(r.relays[0]!.connected).to.equal(true);
          failures = (await metricValue(metrics, 'mgw_broker_publish_failures_total')) - failuresAt;
          return failures >= 5;
        },
        { timeoutMs: 15_000, intervalMs: 20, what: 'five more denied publishes' },
      );
      const elapsed = Date.now() - started;
      console.log(`      ${failures} denied publishes in ${elapsed} ms (retry every 200 ms)`);
      expect([...gauge]).to.deep.equal([1]);
      // One device, retried every 200 ms (config.retryMs), not once per round trip: at most one a
      // retry period in the time it took (load makes them rarer, never more frequent).
      expect(failures).to.be.at.most(Math.ceil(elapsed / 200) + 2);
      expect(logs).to.not.include('sqs unreachable');
      expect(logs.match(/sqs reachable/g)).to.have.length(1);
      expect(logs.match(/broker relay: publish failed/g)).to.have.length(1);
      const report = await new WebhookReport(redis).brokerReport(d, 'sqs');
      expect(report.lastError).to.match(/^User: .* is not authorized to perform: sqs:sendmessage/);

      proxy.deny.clear();
      await waitFor(() => orderAndCompleteness(reader.received, d, 5).problems.length === 0, {
        timeoutMs: 10_000,
        what: 'the 5 events once allowed',
      });
      expect(await metricValue(metrics, 'mgw_broker_connected')).to.equal(1);
    } finally {
      await open.relays?.stop();
      open.relays = undefined;
      await proxy.close();
    }
  });

  it('When the log drops events while SendMessageBatch is refused, then they are counted lost once, when the cursor moves past them, not at every retry', async () => {
    const proxy = await SqsDenyProxy.start(sqs.endpoint);
    try {
      const { url, reader } = await queue(`trim-${uid()}.fifo`);
      const { metrics } = await relays(url, { endpoint: proxy.endpoint });
      const d = `trim-${uid()}`;
      await optIn(d);
      await publishEvent(redis, d, 'message.sent', { seq: 1 });
      await waitFor(async () => (await redis.hget(keys.brokerCursor(d, 'sqs'), 'ord')) === '1', {
        what: 'the first event published',
      });
      proxy.deny.add('SendMessageBatch');
      for (let seq = 2; seq <= 11; seq++) await publishEvent(redis, d, 'message.sent', { seq });
      // What a MAXLEN (count bound) or MINID (retention) trim does: the oldest entries go (2–7).
      await redis.xtrim(keys.eventLog(d), 'MAXLEN', 4);
      const denied = proxy.denied.get('SendMessageBatch') ?? 0;
      await waitFor(() => (proxy.denied.get('SendMessageBatch') ?? 0) >= denied + 3, {
        what: 'three refused tries after the trim',
      });
      expect(await metricValue(metrics, 'mgw_broker_lost_events_total')).to.equal(0);
      proxy.deny.clear();
      await waitFor(() => reader.received.some((m) => m.body.data.seq === 11), { what: 'the last event' });
      expect(reader.received.map((m) => m.body.data.seq)).to.deep.equal([1, 8, 9, 10, 11]);
      await counterReaches(metrics, 'mgw_broker_lost_events_total', 'sqs', 6);
    } finally {
      await open.relays?.stop();
      open.relays = undefined;
      await proxy.close();
    }
  });

  it('When SQS is down and a device that did not opt in logs many events, then the backlog gauges count only what the devices would get: 0 for it (its events passed over), the wanted types only for one that picked them', async () => {
    const { relays: r, metrics } = await relays(sqs.queueUrl(`down-${uid()}.fifo`), { connected: false });
    const [none, picky, all] = [`none-${uid()}`, `picky-${uid()}`, `all-${uid()}`];
    for (let seq = 1; seq <= 60; seq++) await publishEvent(redis, none, 'message.sent', { seq });
    const backlog = async () => {
      r.collect();
      return [
        await metricValue(metrics, 'mgw_broker_backlog_events'),
        await metricValue(metrics, 'mgw_broker_oldest_pending_seconds'),
      ];
    };
    // Every event of `none` looked at (its cursor at the end of its log), and nothing waits.
    await waitFor(async () => (await redis.hget(keys.brokerCursor(none, 'sqs'), 'ord')) === '60', {
      what: 'the events of the device that did not opt in passed over',
    });
    expect(await backlog()).to.deep.equal([0, 0]);
    expect(r.relays[0]!.connected).to.equal(false);
    // What `none` logged is older than anything below by 2.5 s at least, whatever the load.
    await new Promise((res) => setTimeout(res, 2500));
    const afterNone = Date.now();

    await optIn(picky, ['message.read']);
    await optIn(all);
    const types: EventType[] = ['message.sent', 'message.sent', 'message.sent', 'message.read'];
    for (let seq = 1; seq <= 12; seq++)
      await publishEvent(redis, picky, types[(seq - 1) % types.length]!, { seq });
    for (let seq = 1; seq <= 5; seq++) await publishEvent(redis, all, 'message.delivered', { seq });
    for (let seq = 61; seq <= 100; seq++) await publishEvent(redis, none, 'message.sent', { seq });
    // picky: 3 of its 12 (seq 4, 8, 12); all: 5; none: 0.
    await waitFor(async () => (await backlog())[0] === 8, {
      what: 'a backlog of the 8 events the devices want',
    });
    const [, oldest] = await backlog();
    // The oldest waiting is picky's first message.read, not the first event of `none`: younger than
    // the time since `none` logged (an order of the two, not a bound a slow read could pass).
    expect(oldest)
      .to.be.greaterThan(0)
      .and.lessThan((Date.now() - afterNone) / 1000);
    // What waits starts with an event the device wants (the dashboard's "waiting" counts from there).
    expect(await redis.hget(keys.brokerCursor(picky, 'sqs'), 'ord')).to.equal('3');
    expect(await redis.hget(keys.brokerCursor(all, 'sqs'), 'ord')).to.equal(null);
    await waitFor(async () => (await redis.hget(keys.brokerCursor(none, 'sqs'), 'ord')) === '100', {
      what: 'the later events of `none` passed over too',
    });
    expect((await backlog())[0]).to.equal(8);
  });

  it('When the queue is missing from the start, then each device with events waiting shows why as its last SQS error, recorded once (not per event), no publish failure counted; a device that did not opt in shows none', async () => {
    const name = `missing-${uid()}.fifo`;
    const { relays: r, metrics } = await relays(sqs.queueUrl(name), { connected: false });
    const [waiting, none] = [`wait-${uid()}`, `none-${uid()}`];
    await optIn(waiting);
    const report = new WebhookReport(redis);
    for (let seq = 1; seq <= 10; seq++) {
      await publishEvent(redis, waiting, 'message.sent', { seq });
      await publishEvent(redis, none, 'message.sent', { seq });
      await new Promise((res) => setTimeout(res, 50));
    }
    await waitFor(async () => (await report.brokerReport(waiting, 'sqs')).lastError !== undefined, {
      what: 'the device’s last SQS error',
    });
    await new Promise((res) => setTimeout(res, 1000));
    const got = await report.brokerReport(waiting, 'sqs');
    expect(got.lastError).to.equal('not connected (events wait): The specified queue does not exist.');
    expect(Date.parse(got.lastErrorAt!)).to.be.closeTo(Date.now(), 10_000);
    expect(got.failures).to.equal(1);
    expect(await report.brokerReport(none, 'sqs')).to.deep.equal({ failures: 0 });
    expect(await metricValue(metrics, 'mgw_broker_publish_failures_total')).to.equal(0);
    expect(r.relays[0]!.connected).to.equal(false);

    const { reader } = await queue(name);
    await waitFor(() => orderAndCompleteness(reader.received, waiting, 10).problems.length === 0, {
      timeoutMs: 20_000,
      what: 'the 10 events once the queue exists',
    });
    expect(reader.received.filter((m) => m.groupId === none)).to.deep.equal([]);
  });
});
