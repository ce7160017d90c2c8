import { once } from 'node:events';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { startRedisServer, waitFor, type RedisServerHandle } from '@mgw/testing';
import {
  closeRedis,
  createLogger,
  createRedis,
  Subscription,
  type SubscriptionOptions,
} from '../src/index.js';

/** A logger whose lines the test reads. */
function capturedLogger() {
  const lines: { level: string; message: string; why?: string }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: createLogger({ service: 'subscription-test', stream, level: 'debug' }) };
}

/**
 * The subscription helper against a redis-server of the test's own (it pauses it, kills its
 * clients and changes its ACL users).
 */
describe('common: a Redis subscription confirmed by the server and restored after every loss', function () {
  this.timeout(30_000);
  let server: RedisServerHandle;
  let admin: Redis;
  const opened: Redis[] = [];
  const running: Subscription[] = [];

  before(async () => {
    server = await startRedisServer();
    admin = new Redis(server.url);
  });
  after(async () => {
    admin?.disconnect();
    await server?.stop();
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((s) => s.stop()));
    await closeRedis(...opened.splice(0));
  });

  const connect = (url = server.url, name = 'sub-test') => {
    const client = createRedis(url, 'subscriber', name) as Redis;
    opened.push(client);
    return client;
  };
  const subscription = (opts: Partial<SubscriptionOptions> & Pick<SubscriptionOptions, 'client'>) => {
    const got: string[] = [];
    const log = capturedLogger();
    let confirmations = 0;
    const s = new Subscription({
      channels: ['test:a', 'test:b'],
      onMessage: (channel, message) => got.push(`${channel}=${message}`),
      onSubscribed: () => confirmations++,
      logger: log.logger,
      ...opts,
    });
    running.push(s);
    return { s, got, log, confirmations: () => confirmations };
  };
  const subscribers = async (channel: string) => Number((await admin.pubsub('NUMSUB', channel))[1]);

  it('When it is started as the connection has just connected (ready check not yet done), then Redis has the subscription and messages arrive', async () => {
    const client = connect();
    const { s, got } = subscription({ client });
    // The moment the old code subscribed in on a loaded machine: ioredis then lost the subscription.
    await once(client, 'connect');
    expect(client.status).to.equal('connect');
    await s.start();

    expect(s.subscribed).to.equal(true);
    expect(s.problem).to.equal(undefined);
    expect(await subscribers('test:a')).to.equal(1);
    expect(await subscribers('test:b')).to.equal(1);
    await admin.publish('test:a', 'one');
    await admin.publish('test:other', 'not ours');
    await waitFor(() => got.length === 1, { timeoutMs: 5000, what: 'the message' });
    expect(got).to.deep.equal(['test:a=one']);
  });

  it('When its connection is killed, then it says so (gauge 0, a warn line) and is subscribed again after the reconnect (info line, onSubscribed again)', async () => {
    const client = connect(server.url, 'sub-test-kill');
    const gauge = new Map<string, number>();
    const { s, got, log, confirmations } = subscription({
      client,
      gauge: { set: ({ channel }, value) => gauge.set(channel, value) },
    });
    await s.start();
    expect([...gauge.values()]).to.deep.equal([1, 1]);
    expect(confirmations()).to.equal(1);

    await admin.client('KILL', 'TYPE', 'pubsub');
    await waitFor(() => !s.subscribed, { timeoutMs: 5000, what: 'the loss noticed' });
    expect(s.problem).to.match(/^not subscribed to test:a, test:b: the Redis connection closed$/);
    await waitFor(() => s.subscribed, { timeoutMs: 5000, what: 'the subscription back' });

    expect(confirmations()).to.equal(2);
    expect([...gauge.values()]).to.deep.equal([1, 1]);
    expect(log.lines.map((l) => [l.level, l.message])).to.deep.include.members([
      ['warn', 'Redis subscription lost; messages are missed until it is back'],
      ['info', 'Redis subscription restored'],
    ]);
    await admin.publish('test:b', 'two');
    await waitFor(() => got.length === 1, { timeoutMs: 5000, what: 'the message after the reconnect' });
  });

  it('When Redis refuses the SUBSCRIBE (its ACL), then it is not subscribed and names the refusal, and it subscribes once Redis allows it', async () => {
    await admin.acl('SETUSER', 'sub-limited', 'on', '>pw', '~*', '+@all', 'resetchannels');
    try {
      const url = new URL(server.url);
      url.username = 'sub-limited';
      url.password = 'pw';
      const client = connect(url.toString(), 'sub-test-acl');
      const { s, log } = subscription({ client, retryMs: 100 });
      const started = s.start();
      await waitFor(() => (s.problem ?? '').includes('NOPERM'), { timeoutMs: 5000, what: 'the refusal' });
      expect(s.subscribed).to.equal(false);
      expect(log.lines.filter((l) => l.level === 'warn')).to.have.length(1); // not once per retry

      await admin.acl('SETUSER', 'sub-limited', '&*');
      await started;
      expect(s.subscribed).to.equal(true);
      expect(await subscribers('test:a')).to.equal(1);
    } finally {
      await admin.acl('DELUSER', 'sub-limited');
    }
  });

  it('When a SUBSCRIBE goes unanswered (Redis stalled), then the connection is reopened and the subscription confirmed on the new one', async () => {
    const client = connect(server.url, 'sub-test-stall');
    const { s, got } = subscription({ client, checkMs: 100, timeoutMs: 300 });
    await s.start();
    const closed = once(client, 'close');
    // Every command waits 1.5 s: the next check's SUBSCRIBE is not answered in time.
    await admin.client('PAUSE', 1500, 'ALL');
    await closed;
    expect(s.subscribed).to.equal(false);
    expect(s.problem).to.match(/SUBSCRIBE unanswered for 300 ms|the Redis connection closed/);
    await waitFor(() => s.subscribed, { timeoutMs: 10_000, what: 'the subscription back' });
    await admin.publish('test:a', 'three');
    await waitFor(() => got.length === 1, { timeoutMs: 5000, what: 'the message after the stall' });
  });

  it('When its connection is closed for good (the process shutting down), then it is no longer subscribed and logs no loss', async () => {
    const client = connect(server.url, 'sub-test-quit');
    let lost = 0;
    const { s, log } = subscription({ client, onLost: () => lost++ });
    await s.start();
    await closeRedis(client);
    await waitFor(() => !s.subscribed, { timeoutMs: 5000, what: 'the close noticed' });

    expect(lost).to.equal(1);
    expect(log.lines.filter((l) => l.level === 'warn')).to.deep.equal([]);
  });

  it('When two subscriptions share a connection and one stops, then the other keeps its channels', async () => {
    const client = connect(server.url, 'sub-test-shared');
    const one = subscription({ client, channels: ['test:one'] });
    const two = subscription({ client, channels: ['test:two'] });
    await Promise.all([one.s.start(), two.s.start()]);
    await one.s.stop();

    expect(await subscribers('test:one')).to.equal(0);
    expect(await subscribers('test:two')).to.equal(1);
    await admin.publish('test:two', 'kept');
    await waitFor(() => two.got.length === 1, { timeoutMs: 5000, what: 'the message' });
    expect(one.got).to.deep.equal([]);
  });
});
