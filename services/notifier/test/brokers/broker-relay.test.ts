import { expect } from 'chai';
import { closeRedis, createLogger, createRedis, waitForRedis, type RedisClient } from '@mgw/common';
import { createMetrics, keys, type EventType } from '@mgw/contracts';
import { randomBytes } from 'node:crypto';
import { BrokerSettingsStore, Encryption, EncryptionKey, publishEvent } from '@mgw/store';
import {
  startNatsServer,
  startRabbitMqServer,
  startRedisServer,
  waitFor,
  type BrokerServerHandle,
  type RedisServerHandle,
} from '@mgw/testing';
import type { BrokerConfig } from '../../src/brokers/broker-config.js';
import { startBrokerRelays, type BrokerRelays } from '../../src/brokers/broker-relays.js';
import { connect as connectNats } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { orderAndCompleteness, RabbitReader, readNatsStream, type Received } from './readers.js';
import { counterReaches, relayMetric } from './relay-metrics.js';

/**
 * The broker relay against real servers: a private rabbitmq-server and nats-server (JetStream)
 * started here on free ports (a server that cannot start fails the test with its reason), a
 * private redis-server too — a relay serves every device with events in its Redis, so on the
 * suite's shared one its backlog gauges would count other files' devices — and events written by
 * the real emit script (`publishEvent` → `mgw_emit`).
 */
describe('notifier: broker relay to RabbitMQ and NATS JetStream (real servers)', function () {
  this.timeout(120_000);
  let rabbit: BrokerServerHandle;
  let nats: BrokerServerHandle;
  let redisServer: RedisServerHandle;
  let redis: RedisClient;
  const open: { relays?: BrokerRelays; subs: RedisClient[]; readers: RabbitReader[] } = {
    subs: [],
    readers: [],
  };
  const logger = createLogger({ level: 'silent', service: 'broker-test' });
  const uid = () => Math.random().toString(36).slice(2, 8);

  before(async () => {
    [rabbit, nats, redisServer] = await Promise.all([
      startRabbitMqServer(),
      startNatsServer(),
      startRedisServer({ stopWithParent: true }),
    ]);
    redis = createRedis(redisServer.url, 'worker', 'broker-test');
    await waitForRedis(redis);
  });
  after(async () => {
    await closeRedis(redis);
    await Promise.all([rabbit?.stop(), nats?.stop(), redisServer?.stop()]);
  });
  afterEach(async () => {
    await open.relays?.stop();
    open.relays = undefined;
    await Promise.all(open.readers.splice(0).map((r) => r.close()));
    await closeRedis(...open.subs.splice(0));
  });

  /** Starts the relays of one notifier (`owner`) on the given transports. */
  async function relays(
    o: {
      exchange?: string;
      stream?: string;
      prefix?: string;
      rabbitmq?: boolean;
      nats?: boolean;
      batch?: number;
    },
    owner = `notifier-${uid()}`,
  ) {
    const metrics = createMetrics();
    const config: BrokerConfig = {
      ...(o.rabbitmq !== false && o.exchange ? { rabbitmq: { url: rabbit.url, exchange: o.exchange } } : {}),
      ...(o.nats !== false && o.stream
        ? {
            nats: {
              url: nats.url,
              stream: o.stream,
              subjectPrefix: o.prefix ?? `ev${uid()}`,
              duplicateWindowMs: 120_000,
            },
          }
        : {}),
      batch: o.batch ?? 200,
      sweepMs: 500,
      retryMs: 200,
    };
    const r = await startBrokerRelays({
      config,
      redis,
      subscriber: () => {
        const s = createRedis(redisServer.url, 'subscriber', 'broker-test-sub');
        open.subs.push(s);
        return s;
      },
      sealer: Encryption.fromEnv(),
      owner,
      metrics,
      logger,
    });
    await waitFor(() => r!.relays.every((x) => x.connected), {
      timeoutMs: 20_000,
      what: 'brokers connected',
    });
    return { relays: r!, metrics };
  }

  async function reader(exchange: string, pattern = '#') {
    const r = new RabbitReader(rabbit.url, exchange, `q-${uid()}`, pattern);
    await r.start();
    open.readers.push(r);
    return r;
  }

  /**
   * Waits for the backlog gauge to read 0. The relay counts its backlog when it reads the log, so
   * after the broker confirmed the last page (which a consumer may see first) it is its next read,
   * finding nothing left, that brings the gauge to 0.
   */
  async function backlogDrained(
    r: Awaited<ReturnType<typeof relays>>['relays'],
    metrics: ReturnType<typeof createMetrics>,
    transport: string,
  ): Promise<void> {
    await waitFor(
      async () => {
        r.collect();
        return (await relayMetric(metrics, 'mgw_broker_backlog_events', transport)) === 0;
      },
      { timeoutMs: 10_000, what: `the ${transport} backlog gauge back to 0` },
    );
  }

  it('When devices emit events, then RabbitMQ gets each once with routing key <deviceId>.<type>, messageId = event id, the webhook body (persistent JSON), and NATS the same on <prefix>.<deviceId>.<type> with Nats-Msg-Id = event id', async () => {
    const exchange = `ex-${uid()}`;
    const stream = `S${uid()}`;
    const prefix = `mgw${uid()}.events`;
    const rr = await reader(exchange);
    const { relays: r, metrics } = await relays({ exchange, stream, prefix });
    open.relays = r;
    const devices = [`d1-${uid()}`, `d_2-${uid()}`];
    const sent: { deviceId: string; id: string; type: EventType; seq: number }[] = [];
    const types: EventType[] = ['message.sent', 'message.delivered', 'session.status'];
    for (let seq = 1; seq <= 30; seq++)
      for (const deviceId of devices) {
        const id = `evt-${uid()}-${seq}`;
        const type = types[seq % types.length]!;
        await publishEvent(redis, deviceId, type, { seq }, { id });
        sent.push({ deviceId, id, type, seq });
      }

    await waitFor(() => rr.received.length >= sent.length, { timeoutMs: 20_000, what: 'RabbitMQ messages' });
    let natsGot: Received[] = [];
    await waitFor(async () => (natsGot = await readNatsStream(nats.url, stream)).length >= sent.length, {
      timeoutMs: 20_000,
      what: 'JetStream messages',
    });

    for (const [got, keyOf] of [
      [rr.received, (s: (typeof sent)[0]) => `${s.deviceId}.${s.type}`],
      [natsGot, (s: (typeof sent)[0]) => `${prefix}.${s.deviceId}.${s.type}`],
    ] as const) {
      expect(got).to.have.length(sent.length);
      const byId = new Map(got.map((g) => [g.id, g]));
      for (const s of sent) {
        const g = byId.get(s.id);
        expect(g, s.id).to.not.equal(undefined);
        expect(g!.key).to.equal(keyOf(s));
        expect(g!.body.type).to.equal(s.type);
        expect(g!.body.data).to.deep.equal({ deviceId: s.deviceId, seq: s.seq });
        expect(Date.parse(g!.body.timestamp)).to.be.closeTo(Date.now(), 60_000);
      }
      for (const d of devices)
        expect(orderAndCompleteness(got, d, 30)).to.deep.equal({ duplicates: 0, problems: [] });
    }
    expect(rr.received.every((m) => m.contentType === 'application/json' && m.persistent)).to.equal(true);
    await counterReaches(metrics, 'mgw_broker_published_total', 'rabbitmq', sent.length);
    await counterReaches(metrics, 'mgw_broker_published_total', 'nats', sent.length);
    expect(await relayMetric(metrics, 'mgw_broker_connected', 'rabbitmq')).to.equal(1);
  });

  it("When a device turns a transport off or picks event types (PUT /events/brokers' store), then only what it wants is published; another device gets everything (the default)", async () => {
    const exchange = `ex-${uid()}`;
    const stream = `S${uid()}`;
    const rr = await reader(exchange);
    const { relays: r } = await relays({ exchange, stream });
    open.relays = r;
    const [off, picky, all] = [`off-${uid()}`, `picky-${uid()}`, `all-${uid()}`];
    const settings = new BrokerSettingsStore(redis);
    await settings.set(off, { rabbitmq: { enabled: false } });
    await settings.set(picky, {
      rabbitmq: { enabled: true, events: ['message.read'] },
      nats: { enabled: false },
    });
    for (const d of [off, picky, all])
      for (const type of ['message.sent', 'message.read'] as const)
        await publishEvent(redis, d, type, { seq: 1 });
    // A marker last: once it is in, everything before it was looked at.
    await publishEvent(redis, all, 'batch.completed', { seq: 2 });

    await waitFor(() => rr.received.some((m) => m.body.type === 'batch.completed'), { what: 'the marker' });
    let natsGot: Received[] = [];
    await waitFor(
      async () =>
        (natsGot = await readNatsStream(nats.url, stream)).some((m) => m.body.type === 'batch.completed'),
      {
        what: 'the NATS marker',
      },
    );
    const summary = (got: Received[]) => got.map((m) => m.key.split('.').slice(-3).join('.')).sort();
    expect(summary(rr.received)).to.deep.equal(
      [
        `${all}.message.sent`,
        `${all}.message.read`,
        `${all}.batch.completed`,
        `${picky}.message.read`,
      ].sort(),
    );
    // NATS: `off` is off for RabbitMQ only; `picky` is off for NATS.
    expect(summary(natsGot)).to.deep.equal(
      [
        `${off}.message.sent`,
        `${off}.message.read`,
        `${all}.message.sent`,
        `${all}.message.read`,
        `${all}.batch.completed`,
      ].sort(),
    );
    // Passed over, not waiting: the cursors reached the end of each log.
    for (const d of [off, picky]) {
      const cursor = await redis.hget(keys.brokerCursor(d, 'rabbitmq'), 'ord');
      expect(cursor).to.equal('2');
    }
  });

  for (const which of ['rabbitmq', 'nats'] as const)
    it(`When ${which} is killed (SIGKILL) mid-stream and restarted on the same port, then every event reaches it at least once, in order per device, none lost`, async () => {
      const exchange = `ex-${uid()}`;
      const stream = `S${uid()}`;
      const server = which === 'rabbitmq' ? rabbit : nats;
      const rr = which === 'rabbitmq' ? await reader(exchange) : undefined;
      const { relays: r, metrics } = await relays(which === 'rabbitmq' ? { exchange } : { stream });
      open.relays = r;
      const devices = [`k1-${uid()}`, `k2-${uid()}`, `k3-${uid()}`];
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
      await server.kill();
      await waitFor(() => !r.relays[0]!.connected, { what: 'the relay to see the broker gone' });
      await new Promise((res) => setTimeout(res, 1000));
      // Down: the gauges say so (what the alerts read).
      r.collect();
      expect(await relayMetric(metrics, 'mgw_broker_connected', which)).to.equal(0);
      expect(await relayMetric(metrics, 'mgw_broker_backlog_events', which)).to.be.greaterThan(0);
      expect(await relayMetric(metrics, 'mgw_broker_oldest_pending_seconds', which)).to.be.greaterThan(0.5);
      await server.restart();
      await writer;

      const total = devices.length * perDevice;
      let got: Received[] = [];
      await waitFor(
        async () => {
          got = rr ? rr.received : await readNatsStream(nats.url, stream);
          return devices.every((d) => orderAndCompleteness(got, d, perDevice).problems.length === 0);
        },
        { timeoutMs: 60_000, intervalMs: 500, what: `all ${total} events on ${which}` },
      ).catch(() => {
        throw new Error(
          devices.map((d) => orderAndCompleteness(got, d, perDevice).problems.join('; ')).join(' | '),
        );
      });
      const dups = devices.reduce((a, d) => a + orderAndCompleteness(got, d, perDevice).duplicates, 0);
      console.log(
        `      ${which}: ${total} events, ${got.length} received, ${dups} redelivered copies, 0 lost, order kept`,
      );
      expect(await relayMetric(metrics, 'mgw_broker_lost_events_total', which)).to.equal(0);
      await backlogDrained(r, metrics, which);
      expect(await relayMetric(metrics, 'mgw_broker_connected', which)).to.equal(1);
      expect(await relayMetric(metrics, 'mgw_broker_oldest_pending_seconds', which)).to.equal(0);
      // No count of failed publishes is asserted: whether a batch was in flight at the kill is
      // chance (NATS' client sees its socket close at once and the relay then waits without one).
    });

  it('When a device that had RabbitMQ off turns it on while the broker is down, then once it is back only the events logged after the change arrive: those logged while it was off are not replayed', async () => {
    const exchange = `ex-${uid()}`;
    const rr = await reader(exchange);
    const { relays: r } = await relays({ exchange });
    open.relays = r;
    const d = `optin-${uid()}`;
    const settings = new BrokerSettingsStore(redis);
    await settings.set(d, { rabbitmq: { enabled: false } });
    await rabbit.kill();
    await waitFor(() => !r.relays[0]!.connected, { what: 'the relay to see RabbitMQ gone' });
    for (let seq = 1; seq <= 5; seq++) await publishEvent(redis, d, 'message.sent', { seq });
    await settings.set(d, { rabbitmq: { enabled: true } });
    for (let seq = 6; seq <= 8; seq++) await publishEvent(redis, d, 'message.sent', { seq });
    await rabbit.restart();
    // Every event looked at (published or passed over), then what the queue got.
    await waitFor(async () => (await redis.hget(keys.brokerCursor(d, 'rabbitmq'), 'ord')) === '8', {
      timeoutMs: 30_000,
      what: 'the cursor past the 8 events',
    });
    await waitFor(() => rr.received.some((m) => m.body.data.seq === 8), { what: 'the last event' });
    await new Promise((res) => setTimeout(res, 300));
    const seqs = rr.received.filter((m) => m.body.data.deviceId === d).map((m) => m.body.data.seq);
    expect([...new Set(seqs)]).to.deep.equal([6, 7, 8]);
  });

  it('When a device changes its NATS event types while the broker is down, then once it is back each event is published by the types in force when it was logged', async () => {
    const stream = `S${uid()}`;
    const { relays: r } = await relays({ stream });
    open.relays = r;
    const d = `types-${uid()}`;
    const settings = new BrokerSettingsStore(redis);
    await settings.set(d, { nats: { enabled: true, events: ['message.read'] } });
    await nats.kill();
    await waitFor(() => !r.relays[0]!.connected, { what: 'the relay to see NATS gone' });
    await publishEvent(redis, d, 'message.sent', { seq: 1 });
    await publishEvent(redis, d, 'message.read', { seq: 2 });
    await publishEvent(redis, d, 'message.sent', { seq: 3 });
    await settings.set(d, { nats: { enabled: true, events: ['message.sent'] } });
    await publishEvent(redis, d, 'message.read', { seq: 4 });
    await publishEvent(redis, d, 'message.sent', { seq: 5 });
    await nats.restart();
    await waitFor(async () => (await redis.hget(keys.brokerCursor(d, 'nats'), 'ord')) === '5', {
      timeoutMs: 30_000,
      what: 'the cursor past the 5 events',
    });
    const got = (await readNatsStream(nats.url, stream)).filter((m) => m.body.data.deviceId === d);
    expect(got.map((m) => [m.body.data.seq, m.body.type])).to.deep.equal([
      [2, 'message.read'],
      [5, 'message.sent'],
    ]);
  });

  it('When NATS refuses the batches while connected (the stream was deleted), then each refusal is counted, the events wait in the log, and once the stream is back they arrive, in order, none lost', async () => {
    const stream = `S${uid()}`;
    const prefix = `ev${uid()}`;
    const { relays: r, metrics } = await relays({ stream, prefix });
    open.relays = r;
    const before = `rf1-${uid()}`;
    for (let seq = 1; seq <= 5; seq++) await publishEvent(redis, before, 'message.sent', { seq });
    await waitFor(
      async () =>
        orderAndCompleteness(await readNatsStream(nats.url, stream), before, 5).problems.length === 0,
      { timeoutMs: 20_000, intervalMs: 200, what: 'the first events on NATS' },
    );
    const nc = await connectNats({ servers: nats.url });
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.delete(stream);
      const device = `rf2-${uid()}`;
      for (let seq = 1; seq <= 20; seq++) await publishEvent(redis, device, 'message.sent', { seq });
      // Refused, retried, refused again: the whole page (all 20, once written) waits in the log.
      await waitFor(
        async () => {
          r.collect();
          return (
            (await relayMetric(metrics, 'mgw_broker_publish_failures_total', 'nats')) >= 2 &&
            (await relayMetric(metrics, 'mgw_broker_backlog_events', 'nats')) === 20
          );
        },
        { timeoutMs: 20_000, what: 'refused publishes counted and the 20 events waiting' },
      );
      expect(await relayMetric(metrics, 'mgw_broker_connected', 'nats')).to.equal(1);
      await jsm.streams.add({ name: stream, subjects: [`${prefix}.>`] });
      let got: Received[] = [];
      await waitFor(
        async () => {
          got = await readNatsStream(nats.url, stream);
          return orderAndCompleteness(got, device, 20).problems.length === 0;
        },
        { timeoutMs: 20_000, intervalMs: 200, what: 'the refused events once the stream is back' },
      );
      console.log(
        `      ${await relayMetric(metrics, 'mgw_broker_publish_failures_total', 'nats')} refused batches counted; 20 of 20 events arrived after`,
      );
      expect(orderAndCompleteness(got, device, 20).duplicates).to.equal(0);
      await backlogDrained(r, metrics, 'nats');
      expect(await relayMetric(metrics, 'mgw_broker_lost_events_total', 'nats')).to.equal(0);
    } finally {
      await nc.close();
    }
  });

  it('When an event is sealed under a key the notifier does not have, then it is passed over (counted lost) and the events after it are published, in order', async () => {
    const exchange = `ex-${uid()}`;
    const rr = await reader(exchange);
    const { relays: r, metrics } = await relays({ exchange });
    open.relays = r;
    const deviceId = `sealed-${uid()}`;
    // Sealed under a key dropped from the keyring (never in MGW_ENCRYPTION_*): it cannot be opened.
    const gone = Encryption.fromConfig({ current: new EncryptionKey('gone', randomBytes(32)), old: [] });
    await publishEvent(redis, deviceId, 'group.updated', { seq: 1 }, { sealer: Encryption.fromEnv() });
    await publishEvent(redis, deviceId, 'group.updated', { seq: 2 }, { sealer: gone });
    await publishEvent(redis, deviceId, 'message.sent', { seq: 3 });

    await waitFor(() => rr.received.some((m) => m.body.type === 'message.sent'), { what: 'the last event' });
    expect(rr.received.map((m) => (m.body.data as { seq: number }).seq)).to.deep.equal([1, 3]);
    await counterReaches(metrics, 'mgw_broker_lost_events_total', 'rabbitmq', 1);
    await waitFor(async () => (await redis.hget(keys.brokerCursor(deviceId, 'rabbitmq'), 'ord')) === '3', {
      what: 'the cursor past the three events',
    });
  });

  it('When two notifiers relay the same devices to RabbitMQ and one stops mid-stream, then each device is published by one at a time and the other takes over: every event once, in order', async () => {
    const exchange = `ex-${uid()}`;
    const rr = await reader(exchange);
    const a = await relays({ exchange, batch: 20 }, 'notifier-a');
    const b = await relays({ exchange, batch: 20 }, 'notifier-b');
    let bStopped = false;
    open.relays = {
      relays: [],
      collect: () => {},
      stop: async () => void (await Promise.all([a.relays.stop(), bStopped ? undefined : b.relays.stop()])),
    };
    const devices = [`two1-${uid()}`, `two2-${uid()}`, `two3-${uid()}`, `two4-${uid()}`];
    const perDevice = 400;
    for (let seq = 1; seq <= perDevice; seq++) {
      await Promise.all(devices.map((d) => publishEvent(redis, d, 'message.sent', { seq })));
      if (seq % 10 === 0) await new Promise((res) => setTimeout(res, 5));
      if (seq === perDevice / 2) {
        bStopped = true;
        await b.relays.stop();
      }
    }
    await waitFor(() => rr.received.length >= devices.length * perDevice, {
      timeoutMs: 30_000,
      what: 'all events',
    });
    await new Promise((res) => setTimeout(res, 500));
    for (const d of devices)
      expect(orderAndCompleteness(rr.received, d, perDevice)).to.deep.equal({ duplicates: 0, problems: [] });
    const byA = await relayMetric(a.metrics, 'mgw_broker_published_total', 'rabbitmq');
    const byB = await relayMetric(b.metrics, 'mgw_broker_published_total', 'rabbitmq');
    console.log(`      published by notifier a: ${byA}, by notifier b: ${byB} (stopped half way)`);
    expect(byA + byB).to.equal(devices.length * perDevice);
    expect(byA).to.be.greaterThan(0);
  });

  it('When the log drops events a broker had not taken yet (its count bound while NATS was down), then they are counted as lost and publishing goes on from the oldest kept', async () => {
    const stream = `S${uid()}`;
    const { relays: r, metrics } = await relays({ stream });
    open.relays = r;
    const d = `lost-${uid()}`;
    await publishEvent(redis, d, 'message.sent', { seq: 1 });
    await waitFor(async () => (await readNatsStream(nats.url, stream)).length === 1, {
      what: 'the first event',
    });
    await nats.kill();
    await waitFor(() => !r.relays[0]!.connected, { what: 'NATS seen gone' });
    for (let seq = 2; seq <= 11; seq++) await publishEvent(redis, d, 'message.sent', { seq });
    // What a MAXLEN (count bound) or MINID (retention) trim does: the oldest entries go.
    await redis.xtrim(keys.eventLog(d), 'MAXLEN', 4);
    await nats.restart();
    await waitFor(async () => (await readNatsStream(nats.url, stream)).length === 5, {
      timeoutMs: 20_000,
      what: 'the kept events',
    });
    const got = await readNatsStream(nats.url, stream);
    expect(got.map((m) => m.body.data.seq)).to.deep.equal([1, 8, 9, 10, 11]);
    await counterReaches(metrics, 'mgw_broker_lost_events_total', 'nats', 6);
  });
});
