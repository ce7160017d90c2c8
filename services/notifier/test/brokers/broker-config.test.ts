import { PassThrough } from 'node:stream';
import { expect } from 'chai';
import { closeRedis, createLogger, createRedis, waitForRedis } from '@mgw/common';
import { createMetrics } from '@mgw/contracts';
import { Encryption } from '@mgw/store';
import { freePort, startRabbitMqServer, waitFor } from '@mgw/testing';
import { startBrokerRelays } from '../../src/brokers/broker-relays.js';
import { loadNotifierConfig } from '../../src/config.js';

describe('notifier: broker settings of the install (env) and the secrets in their URLs', function () {
  this.timeout(90_000);
  const env = (extra: Record<string, string>) => ({ ...process.env, ...extra });

  it('When no broker URL is set, then no transport runs; when set, the defaults name the exchange, stream and prefix', () => {
    const none = loadNotifierConfig(env({}));
    expect(none.brokers.rabbitmq).to.equal(undefined);
    expect(none.brokers.nats).to.equal(undefined);
    const both = loadNotifierConfig(
      env({
        EVENTS_RABBITMQ_URL: 'amqps://u:p@mq.internal:5671/prod',
        EVENTS_NATS_URL: 'nats://n.internal:4222',
      }),
    );
    expect(both.brokers).to.deep.include({
      rabbitmq: { url: 'amqps://u:p@mq.internal:5671/prod', exchange: 'mgw.events' },
      nats: {
        url: 'nats://n.internal:4222',
        stream: 'MGW_EVENTS',
        subjectPrefix: 'mgw.events',
        duplicateWindowMs: 120_000,
      },
      batch: 500,
    });
  });

  it('When a broker setting is malformed (another scheme, a wildcard in the subject prefix, a stream name with a dot), then the notifier refuses to start, naming it', () => {
    for (const [name, value] of [
      ['EVENTS_RABBITMQ_URL', 'http://mq.internal'],
      ['EVENTS_NATS_URL', 'redis://n.internal'],
      ['EVENTS_NATS_SUBJECT_PREFIX', 'mgw.*'],
      ['EVENTS_NATS_SUBJECT_PREFIX', 'mgw..events'],
      ['EVENTS_NATS_STREAM', 'mgw.events'],
      ['EVENTS_BROKER_BATCH', '0'],
    ] as const)
      expect(() => loadNotifierConfig(env({ [name]: value })), `${name}=${value}`).to.throw(name);
  });

  it('When EVENTS_SQS_QUEUE_URL is set, then SQS runs: the region from the URL (or EVENTS_SQS_REGION, else us-east-1), EVENTS_SQS_ENDPOINT passed on; a malformed queue URL or region refuses to start', () => {
    expect(loadNotifierConfig(env({})).brokers.sqs).to.equal(undefined);
    const aws = 'https://sqs.eu-west-1.amazonaws.com/123456789012/mgw-events.fifo';
    expect(loadNotifierConfig(env({ EVENTS_SQS_QUEUE_URL: aws, AWS_REGION: '' })).brokers.sqs).to.deep.equal({
      queueUrl: aws,
      region: 'eu-west-1',
    });
    const local = 'http://127.0.0.1:4566/000000000000/events';
    expect(
      loadNotifierConfig(
        env({
          EVENTS_SQS_QUEUE_URL: local,
          EVENTS_SQS_REGION: 'ap-south-1',
          EVENTS_SQS_ENDPOINT: 'http://127.0.0.1:4566',
        }),
      ).brokers.sqs,
    ).to.deep.equal({ queueUrl: local, region: 'ap-south-1', endpoint: 'http://127.0.0.1:4566' });
    expect(
      loadNotifierConfig(env({ EVENTS_SQS_QUEUE_URL: local, AWS_REGION: '', AWS_DEFAULT_REGION: '' })).brokers
        .sqs!.region,
    ).to.equal('us-east-1');
    for (const [name, value] of [
      ['EVENTS_SQS_QUEUE_URL', 'sqs://queue'],
      ['EVENTS_SQS_QUEUE_URL', 'https://sqs.eu-west-1.amazonaws.com/mgw-events'],
      ['EVENTS_SQS_QUEUE_URL', 'https://sqs.eu-west-1.amazonaws.com/1/bad name'],
      ['EVENTS_SQS_REGION', 'Europe'],
      ['EVENTS_SQS_ENDPOINT', 'ftp://x'],
    ] as const)
      expect(() => loadNotifierConfig(env({ [name]: value })), `${name}=${value}`).to.throw(name);
  });

  it('When EVENTS_SQS_QUEUE_URL is not a queue URL (no account, a third segment, another scheme, a dot in the name, not a URL), then the notifier refuses to start with one sentence naming the variable and the expected form', () => {
    const expected =
      'Invalid configuration: EVENTS_SQS_QUEUE_URL: EVENTS_SQS_QUEUE_URL must be the queue’s URL, ' +
      'http(s)://<host>/<account>/<queue name> (the queue name 1 to 80 letters, digits, - or _, ' +
      'ending in .fifo for a FIFO queue), e.g. https://sqs.eu-west-1.amazonaws.com/123456789012/mgw-events.fifo';
    for (const value of [
      'https://sqs.eu-west-1.amazonaws.com/mgw-events',
      'https://sqs.eu-west-1.amazonaws.com/123456789012/mgw-events/',
      'https://sqs.eu-west-1.amazonaws.com/123456789012/a/mgw-events',
      'https://sqs.eu-west-1.amazonaws.com/123456789012/mgw.events',
      'sqs://sqs.eu-west-1.amazonaws.com/123456789012/mgw-events',
      'sqs://queue',
      'mgw-events',
    ])
      expect(() => loadNotifierConfig(env({ EVENTS_SQS_QUEUE_URL: value })), value)
        .to.throw()
        .with.property('message', expected);
  });

  it('When a broker refuses the credentials or is unreachable, then the logs say so without the password in the URL', async () => {
    const rabbit = await startRabbitMqServer();
    const out = new PassThrough();
    let logs = '';
    out.on('data', (b: Buffer) => (logs += b.toString()));
    const redis = createRedis(process.env.REDIS_URL!, 'worker', 'broker-secrets');
    const subs: ReturnType<typeof createRedis>[] = [];
    await waitForRedis(redis);
    const deadPort = await freePort();
    const secret = 'S3cr3t-pa55word';
    const relays = await startBrokerRelays({
      config: {
        rabbitmq: { url: rabbit.url.replace('guest:guest', `guest:${secret}`), exchange: 'x' },
        nats: {
          url: `nats://mgw:${secret}@127.0.0.1:${deadPort}`,
          stream: 'S',
          subjectPrefix: 'p',
          duplicateWindowMs: 60_000,
        },
        batch: 10,
        sweepMs: 60_000,
        retryMs: 200,
      },
      redis,
      subscriber: () => {
        const s = createRedis(process.env.REDIS_URL!, 'subscriber', 'broker-secrets-sub');
        subs.push(s);
        return s;
      },
      sealer: Encryption.fromEnv(),
      owner: 'secrets-test',
      metrics: createMetrics(),
      logger: createLogger({ level: 'debug', service: 'broker-test', stream: out }),
    });
    try {
      await waitFor(() => logs.includes('rabbitmq unreachable'), {
        timeoutMs: 20_000,
        what: 'the refusal logged',
      });
      expect(logs).to.include('guest:***@127.0.0.1');
      expect(logs).not.to.include(secret);
      expect(relays!.relays.every((r) => !r.connected)).to.equal(true);
    } finally {
      await relays?.stop();
      await closeRedis(redis, ...subs);
      await rabbit.stop();
    }
    expect(logs).not.to.include(secret);
  });
});
