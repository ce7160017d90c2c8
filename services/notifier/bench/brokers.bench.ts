/**
 * The broker relay of one notifier process against a real rabbitmq-server, nats-server
 * (JetStream) and SQS-protocol server (fauxqs, a FIFO queue), started here on free ports, beside
 * its webhook deliveries in the same run:
 *
 * - throughput: DEVICES × PER_DEVICE events written into the device logs (as the services'
 *   scripts write them) while the notifier is stopped, then one notifier started: events/s from
 *   the first to the last one out, for webhooks (a receiver on 127.0.0.1 answering at once; the
 *   baseline), RabbitMQ (publisher confirms), NATS (PubAcks) and SQS (SendMessageBatch answers,
 *   counted by the queue's ApproximateNumberOfMessages; once more with fauxqs in memory, without
 *   its SQLite writes, for what the relay itself reaches) — each alone (the device settings turn
 *   the others off); goal ≥ 5,000 events/s on RabbitMQ and NATS, ≥ 2,000 on SQS;
 * - broker down: events written at RATE/s over DOWN_DEVICES devices while the broker is killed
 *   (SIGKILL) for DOWN_S seconds and restarted on the same port: events lost (goal 0), order per
 *   device (goal kept), redelivered copies, and how long after the broker listens again the first
 *   new event arrives (goal < 3 s).
 *
 * Rates are printed with their ratio to the webhook figure measured here, never asserted.
 */
import { randomUUID } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { GetQueueAttributesCommand, PurgeQueueCommand } from '@aws-sdk/client-sqs';
import { BrokerSettingsStore, Encryption, WebhookStore, publishEvent } from '@mgw/store';
import {
  Stack,
  WebhookReceiver,
  startNatsServer,
  startRabbitMqServer,
  startSqsServer,
  waitFor,
  type BrokerServerHandle,
  type ServiceProcess,
} from '@mgw/testing';
import { orderAndCompleteness, RabbitReader, readNatsStream } from '../test/brokers/readers.js';
import { createQueue, sqsClient, SqsReader } from '../test/brokers/sqs-reader.js';

const DEVICES = Number(process.env.BENCH_DEVICES ?? 50);
const PER_DEVICE = Number(process.env.BENCH_EVENTS_PER_DEVICE ?? 300);
const DOWN_S = Number(process.env.BENCH_BROKER_DOWN_S ?? 20);
const DOWN_DEVICES = Number(process.env.BENCH_DOWN_DEVICES ?? 20);
const RATE = Number(process.env.BENCH_DOWN_RATE ?? 500);

const EXCHANGE = 'mgw.bench';
const STREAM = 'MGW_BENCH';
const PREFIX = 'mgw.bench';

const [rabbit, nats, sqs, sqsMem] = await Promise.all([
  startRabbitMqServer(),
  startNatsServer(),
  startSqsServer(),
  // The same server without its SQLite write-through: what the relay itself reaches when the
  // queue's storage is not on this machine's cores and disk (as with AWS).
  startSqsServer({ inMemory: true }),
]);
const sqsApi = sqsClient(sqs);
const sqsMemApi = sqsClient(sqsMem);
const queueUrl = await createQueue(sqsApi, sqs, 'mgw-bench.fifo');
const memQueueUrl = await createQueue(sqsMemApi, sqsMem, 'mgw-bench.fifo');
const stack = await Stack.start({
  env: { LOG_LEVEL: 'warn', ALLOWED_PRIVATE_HOSTS: '127.0.0.1' },
});
const receiver = await WebhookReceiver.start();
const reader = new RabbitReader(rabbit.url, EXCHANGE, `bench-${randomUUID().slice(0, 8)}`);
const notifierEnv = {
  EVENTS_RABBITMQ_URL: rabbit.url,
  EVENTS_RABBITMQ_EXCHANGE: EXCHANGE,
  EVENTS_NATS_URL: nats.url,
  EVENTS_NATS_STREAM: STREAM,
  EVENTS_NATS_SUBJECT_PREFIX: PREFIX,
  EVENTS_SQS_QUEUE_URL: queueUrl,
  EVENTS_SQS_ENDPOINT: sqs.endpoint,
  AWS_ACCESS_KEY_ID: sqs.credentials.accessKeyId,
  AWS_SECRET_ACCESS_KEY: sqs.credentials.secretAccessKey,
};
const webhooks = new WebhookStore(stack.redis, Encryption.fromEnv(), 0);
const settings = new BrokerSettingsStore(stack.redis);
const run = randomUUID().slice(0, 6);
let notifier: ServiceProcess | undefined;

const startNotifier = async (env: Record<string, string> = {}) =>
  (notifier = await stack.startService('notifier', { ...notifierEnv, ...env }));
async function stopNotifier(): Promise<void> {
  if (!notifier) return;
  notifier.child.kill('SIGTERM');
  await notifier.exited;
  notifier = undefined;
}

const natsConn = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
const natsCount = async (): Promise<number> => {
  const jsm = await jetstreamManager(natsConn, { timeout: 1000 });
  return (await jsm.streams.info(STREAM)).state.messages;
};

/** Messages in an SQS queue (no consumer reads it during the throughput phase). */
const sqsCount = async (api = sqsApi, url = queueUrl): Promise<number> => {
  const out = await api.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages'] }),
  );
  return Number(out.Attributes?.ApproximateNumberOfMessages ?? -1);
};
/** Polled at most every 50 ms: each count is a request the SQS server answers on the same cores. */
function throttled(count: () => Promise<number>): () => Promise<number> {
  let last = 0;
  let value = 0;
  return async () => {
    if (performance.now() - last >= 50) {
      value = await count();
      last = performance.now();
    }
    return value;
  };
}

/** Writes `perDevice` events on each device, in order per device, many devices at once. */
async function emit(phase: string, ids: string[], perDevice: number): Promise<void> {
  for (let seq = 1; seq <= perDevice; seq++)
    await Promise.all(
      ids.map((d) => publishEvent(stack.redis, d, 'message.delivered', { phase, seq, messageId: `m${seq}` })),
    );
}

/** Polls `count` until it reaches `n`: events/s from `t0` (ms, performance.now) to the last one. */
async function rateFrom(
  t0: number,
  count: () => Promise<number> | number,
  base: number,
  n: number,
): Promise<number> {
  await waitFor(async () => (await count()) - base >= n, {
    timeoutMs: Number(process.env.BENCH_PHASE_TIMEOUT_MS ?? 300_000),
    intervalMs: 5,
    what: `${n} events`,
  });
  return n / Math.max(0.001, (performance.now() - t0) / 1000);
}

try {
  await reader.start();
  await startNotifier(); // records the transports' start on this install
  await waitFor(async () => (await natsCount().catch(() => -1)) >= 0, { what: 'the NATS stream' });

  // --- throughput: each way out alone -------------------------------------------------------
  const n = DEVICES * PER_DEVICE;
  const phase = async (name: 'webhook' | 'rabbitmq' | 'nats' | 'sqs' | 'sqs-memory') => {
    const onSqs = name === 'sqs' || name === 'sqs-memory';
    const ids = Array.from({ length: DEVICES }, (_, i) => `bb-${run}-${name}-${i}`);
    for (const d of ids) {
      await settings.set(d, {
        rabbitmq: { enabled: name === 'rabbitmq' },
        nats: { enabled: name === 'nats' },
        sqs: { enabled: onSqs },
      });
      if (name === 'webhook') await webhooks.set(d, { url: receiver.url });
    }
    await stopNotifier();
    const w0 = performance.now();
    await emit(name, ids, PER_DEVICE);
    const writeS = (performance.now() - w0) / 1000;
    // Counted as they come (never a scan of everything received per poll: this process shares the CPU).
    const counter = <T>(list: T[], phaseOf: (x: T) => unknown) => {
      let seen = 0;
      let i = 0;
      return () => {
        for (; i < list.length; i++) if (phaseOf(list[i]!) === name) seen++;
        return seen;
      };
    };
    const count =
      name === 'webhook'
        ? counter(receiver.deliveries, (d) => (d.status === 200 ? d.body.data.phase : undefined))
        : name === 'rabbitmq'
          ? counter(reader.received, (m) => m.body.data.phase)
          : name === 'nats'
            ? natsCount
            : name === 'sqs'
              ? throttled(() => sqsCount())
              : throttled(() => sqsCount(sqsMemApi, memQueueUrl));
    const base = name === 'nats' ? await natsCount() : onSqs ? await count() : 0;
    await startNotifier(
      name === 'sqs-memory'
        ? { EVENTS_SQS_QUEUE_URL: memQueueUrl, EVENTS_SQS_ENDPOINT: sqsMem.endpoint }
        : {},
    );
    // One more event per device: the log channel wakes the relay (its sweep walks linked devices
    // and these are not), which then publishes each device's whole backlog. The clock starts here
    // (the webhook sweep may start its deliveries a little earlier: in the baseline's favour).
    const t0 = performance.now();
    const rate = rateFrom(t0, count, base, n + DEVICES);
    await Promise.all(ids.map((d) => publishEvent(stack.redis, d, 'message.read', { phase: name, seq: 0 })));
    // A phase that never completes says why: the notifier's last log lines.
    const done = await rate.catch((err: unknown) => {
      console.error(notifier?.output.slice(-20).join('\n'));
      throw err;
    });
    return { rate: done, writeS };
  };
  const hook = await phase('webhook');
  const rmq = await phase('rabbitmq');
  const nts = await phase('nats');
  // In memory first: the notifier left running (for the down phase) is the one on the SQLite server.
  const sqMem = await phase('sqs-memory');
  const sq = await phase('sqs');
  // The down phase reads what it sends: the throughput phase's messages go first.
  await sqsApi.send(new PurgeQueueCommand({ QueueUrl: queueUrl }));
  console.log(
    `${n} events per way out (${DEVICES} devices × ${PER_DEVICE}), written while the notifier was stopped, then one notifier:`,
  );
  console.log(`  webhooks (baseline):  ${hook.rate.toFixed(0)} events/s`);
  console.log(
    `  RabbitMQ (confirms):  ${rmq.rate.toFixed(0)} events/s  (${(rmq.rate / hook.rate).toFixed(2)}x; goal ≥ 5,000/s)`,
  );
  console.log(
    `  NATS (PubAcks):       ${nts.rate.toFixed(0)} events/s  (${(nts.rate / hook.rate).toFixed(2)}x; goal ≥ 5,000/s)`,
  );
  console.log(
    `  SQS (FIFO, batches):  ${sq.rate.toFixed(0)} events/s  (${(sq.rate / hook.rate).toFixed(2)}x; goal ≥ 2,000/s; fauxqs writing each message to SQLite)`,
  );
  console.log(
    `  SQS, server in memory: ${sqMem.rate.toFixed(0)} events/s  (${(sqMem.rate / hook.rate).toFixed(2)}x; the same fauxqs without its SQLite writes)`,
  );

  // --- a broker down DOWN_S seconds under load --------------------------------------------------
  const sqsReader = new SqsReader(sqsApi, queueUrl);
  sqsReader.start();
  for (const which of ['rabbitmq', 'nats', 'sqs'] as const) {
    const server: Pick<BrokerServerHandle, 'kill' | 'restart'> =
      which === 'rabbitmq' ? rabbit : which === 'nats' ? nats : sqs;
    const ids = Array.from({ length: DOWN_DEVICES }, (_, i) => `bd-${run}-${which}-${i}`);
    for (const d of ids)
      await settings.set(d, {
        rabbitmq: { enabled: which === 'rabbitmq' },
        nats: { enabled: which === 'nats' },
        sqs: { enabled: which === 'sqs' },
      });
    const tag = `down-${which}`;
    const received = async () =>
      which === 'rabbitmq'
        ? reader.received.filter((m) => m.body.data.phase === tag)
        : which === 'sqs'
          ? sqsReader.received.filter((m) => m.body.data.phase === tag)
          : (await readNatsStream(nats.url, STREAM)).filter((m) => m.body.data.phase === tag);
    const quickCount = async () =>
      which === 'rabbitmq'
        ? reader.received.filter((m) => m.body.data.phase === tag).length
        : which === 'sqs'
          ? sqsReader.received.filter((m) => m.body.data.phase === tag).length
          : natsCount().catch(() => -1);
    const total = Math.round(((DOWN_S + 15) * RATE) / DOWN_DEVICES) * DOWN_DEVICES;
    const perDevice = total / DOWN_DEVICES;
    // The writer: RATE events/s spread over the devices, in order per device.
    const writer = (async () => {
      const t0 = performance.now();
      for (let seq = 1; seq <= perDevice; seq++) {
        await Promise.all(
          ids.map((d) => publishEvent(stack.redis, d, 'message.delivered', { phase: tag, seq })),
        );
        const due = t0 + (seq * DOWN_DEVICES * 1000) / RATE;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
    })();
    await new Promise((r) => setTimeout(r, 5000));
    await server.kill();
    const killedAt = performance.now();
    await new Promise((r) => setTimeout(r, DOWN_S * 1000));
    await server.restart();
    const backAt = performance.now();
    let before = -1;
    await waitFor(async () => (before = await quickCount()) >= 0, { timeoutMs: 30_000, what: 'a count' });
    let resumedAt = 0;
    await waitFor(
      async () => {
        const c = await quickCount();
        if (c > before) resumedAt = performance.now();
        return c > before;
      },
      { timeoutMs: 60_000, intervalMs: 20, what: `${which} resuming` },
    );
    await writer;
    let got: Awaited<ReturnType<typeof received>> = [];
    await waitFor(
      async () => {
        got = await received();
        return ids.every((d) => orderAndCompleteness(got, d, perDevice).problems.length === 0);
      },
      { timeoutMs: 120_000, intervalMs: 500, what: `every ${which} event` },
    ).catch(() => undefined);
    const checks = ids.map((d) => orderAndCompleteness(got, d, perDevice));
    const problems = checks.flatMap((c) => c.problems);
    const missing = problems.filter((p) => p.includes('missing'));
    const disorder = problems.filter((p) => p.includes(' after '));
    const dups = checks.reduce((a, c) => a + c.duplicates, 0);
    console.log(
      `${which} down ${((backAt - killedAt) / 1000).toFixed(1)} s (SIGKILL, restarted on its port) under ${RATE} events/s over ${DOWN_DEVICES} devices: ${total} events written`,
    );
    console.log(
      `  lost: ${missing.length ? missing.join('; ') : 0} (goal 0); order per device: ${disorder.length ? disorder.join('; ') : 'kept'}; redelivered copies: ${dups}`,
    );
    console.log(
      `  delivery resumed ${((resumedAt - backAt) / 1000).toFixed(2)} s after the broker listened again (goal < 3 s; the broker's own boot after it opens its port included)`,
    );
  }
  await sqsReader.close();
} finally {
  await stopNotifier().catch(() => undefined);
  await reader.close();
  await natsConn.close().catch(() => undefined);
  await receiver.close();
  await stack.stop();
  sqsApi.destroy();
  sqsMemApi.destroy();
  await Promise.all([rabbit.stop(), nats.stop(), sqs.stop(), sqsMem.stop()]);
}
process.exit(0);
