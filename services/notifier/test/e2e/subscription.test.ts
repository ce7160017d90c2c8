import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';
import { Encryption, WebhookStore, publishEvent } from '@mgw/store';
import {
  ORPHAN_GUARD_ARGS,
  REPO_ROOT,
  WebhookReceiver,
  entryArgs,
  freePort,
  startRedisServer,
  waitFor,
  type RedisServerHandle,
} from '@mgw/testing';
import { nodeArgsOf } from '@mgw/testing/node-args';

/**
 * A real notifier process whose subscription to the outbox notifications is taken away: its
 * connection killed, and Redis refusing the channels for a while (an ACL change, which holds the
 * window open long enough to look at it). The sweep is set to a minute, so an event that arrives
 * within a couple of seconds came through the subscription (or the catch-up sweep that follows
 * its return). Its own redis-server: the test changes ACL users and kills clients.
 */
describe('e2e: the notifier keeps its real-time subscription (connection killed, channels refused)', function () {
  this.timeout(120_000);
  /**
   * "Real time": far under the 60 s sweep, the only other way an event goes, and 10 x and more
   * what a delivery takes alone (5-190 ms, the first one the slowest).
   */
  const REAL_TIME_MS = 5000; // quiet: 190 ms
  const deviceId = `sub-${Math.random().toString(36).slice(2, 8)}`;
  let server: RedisServerHandle;
  let admin: Redis;
  let receiver: WebhookReceiver;
  let notifier: ChildProcess;
  let opsPort: number;
  const output: string[] = [];

  before(async () => {
    server = await startRedisServer();
    admin = new Redis(server.url);
    admin.on('error', () => undefined);
    // The notifier's own user, so that its channels can be refused without refusing the test's PUBLISH.
    await admin.acl('SETUSER', 'notifier', 'on', '>pw', '~*', '&*', '+@all');
    receiver = await WebhookReceiver.start();
    const set = await new WebhookStore(admin, Encryption.fromEnv(), 0).set(deviceId, { url: receiver.url });
    receiver.secrets = [set.secret!];
    opsPort = await freePort();
    const url = new URL(server.url);
    url.username = 'notifier';
    url.password = 'pw';
    notifier = spawn(
      process.execPath,
      [...ORPHAN_GUARD_ARGS, ...nodeArgsOf('notifier'), ...entryArgs('services/notifier', 'main', false)],
      {
        cwd: REPO_ROOT,
        env: {
          ...process.env,
          REDIS_URL: url.toString(),
          METRICS_PORT: String(opsPort),
          WEBHOOK_SWEEP_MS: '60000',
          ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
          LOG_LEVEL: 'info',
          NODE_ENV: 'test',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const collect = (d: Buffer) => output.push(...d.toString().split('\n').filter(Boolean));
    notifier.stdout!.on('data', collect);
    notifier.stderr!.on('data', collect);
    await waitFor(
      async () => {
        if (notifier.exitCode !== null) throw new Error(`notifier exited:\n${output.join('\n')}`);
        return (await readyz()).status === 200;
      },
      { timeoutMs: 30_000, what: 'the notifier ready' },
    );
  });
  // A test that failed while the channels were refused does not leave them refused to the next.
  afterEach(async () => {
    await admin.acl('SETUSER', 'notifier', '&*');
  });
  after(async () => {
    if (notifier && notifier.exitCode === null) {
      notifier.kill('SIGTERM');
      await new Promise((resolve) => notifier.once('exit', resolve));
    }
    await receiver?.close();
    admin?.disconnect();
    await server?.stop();
  });

  const readyz = async () => {
    const res = await fetch(`http://127.0.0.1:${opsPort}/readyz`).catch(() => undefined);
    return { status: res?.status, body: (await res?.json().catch(() => undefined)) as unknown };
  };
  const gauge = async () => {
    const page = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
    return /^mgw_redis_subscribed\{channel="mgw:events:outbox"\} (\d)$/m.exec(page)?.[1];
  };
  /** The notifier's subscriber connection, as Redis lists it. */
  const subscriberConnection = async () =>
    String(await admin.client('LIST'))
      .split('\n')
      .find((line) => line.includes(' name=mgw-notifier-sub '));
  const killSubscriber = async () => {
    let id: string | undefined;
    await waitFor(
      async () => (id = /^id=(\d+)/.exec((await subscriberConnection()) ?? '')?.[1]) !== undefined,
      {
        timeoutMs: 5000,
        what: "the notifier's subscriber connection",
      },
    );
    await admin.client('KILL', 'ID', id!);
  };
  /** Publishes an event and resolves with the time until the webhook receives it (ms). */
  const deliveryTime = async (within: number) => {
    const from = receiver.deliveries.length;
    const t0 = Date.now();
    await publishEvent(admin, deviceId, 'session.status', { status: 'connected' });
    await waitFor(() => receiver.deliveries.length > from, {
      timeoutMs: within,
      intervalMs: 5,
      what: 'the event',
    });
    return receiver.deliveries[from]!.startedAt - t0;
  };

  it('When the notifier is ready, then Redis lists its subscription and an event reaches the webhook in real time', async () => {
    expect(await subscriberConnection()).to.match(/ sub=2 /);
    expect(Number((await admin.pubsub('NUMSUB', keys.eventsChannel()))[1])).to.equal(1);
    expect(await gauge()).to.equal('1');
    expect(await deliveryTime(20_000)).to.be.below(REAL_TIME_MS);
  });

  it('When its subscriber connection is killed and Redis refuses the channels, then /readyz is 503 naming the lost subscription; once allowed, an event of the gap arrives at once and the next in real time', async () => {
    await admin.acl('SETUSER', 'notifier', 'resetchannels');
    await killSubscriber();
    // First "the connection closed", then the refusal of the reconnected one.
    const reason = (a: { body: unknown }) =>
      (a.body as { details?: { reason?: string } }).details?.reason ?? '';
    // The answer that names the refusal is the one checked: the notifier keeps reconnecting, and
    // an answer between two attempts names the closed connection instead.
    let answer = await readyz();
    await waitFor(async () => reason((answer = await readyz())).includes('NOPERM'), {
      timeoutMs: 10_000,
      what: '/readyz naming the refusal',
    });
    expect(answer.status).to.equal(503);
    expect(answer.body).to.deep.include({
      success: false,
      error: 'Service unavailable: storage is not reachable',
    });
    expect(reason(answer)).to.match(
      /^not subscribed to mgw:events:outbox, mgw:events:webhooks: SUBSCRIBE failed: NOPERM/,
    );
    expect(await gauge()).to.equal('0');
    const from = receiver.deliveries.length;
    const t0 = Date.now();
    await publishEvent(admin, deviceId, 'session.status', { status: 'connected' });

    await admin.acl('SETUSER', 'notifier', '&*');
    await waitFor(() => receiver.deliveries.length > from, {
      timeoutMs: 20_000,
      what: 'the event of the gap',
    });
    // Not left to the 60 s sweep: 10 x and more its quiet time (820-890 ms), far under that.
    expect(
      receiver.deliveries[from]!.startedAt - t0,
      'the gap event: not left to the 60 s sweep',
    ).to.be.below(20_000); // quiet: 890 ms
    await waitFor(async () => (await readyz()).status === 200, { timeoutMs: 10_000, what: '/readyz 200' });
    expect(await gauge()).to.equal('1');
    expect(await deliveryTime(20_000)).to.be.below(REAL_TIME_MS);
    const logged = output.flatMap((line) => {
      try {
        const l = JSON.parse(line) as { level: string; message: string };
        return [`${l.level} ${l.message}`];
      } catch {
        return [];
      }
    });
    expect(logged).to.include.members([
      'warn Redis subscription lost; messages are missed until it is back',
      'info Redis subscription restored',
    ]);
  });

  it('When its subscriber connection is killed, then the subscription is back in a moment (a reconnection, not a restart) and events reach the webhook in real time again', async () => {
    await killSubscriber();
    const killedAt = Date.now();
    await waitFor(async () => / sub=2 /.test((await subscriberConnection()) ?? ''), {
      timeoutMs: 10_000,
      intervalMs: 20,
      what: 'Redis to list the subscription again',
    });
    const back = Date.now() - killedAt;
    const delivered = await deliveryTime(20_000);
    console.log(
      `      subscription back ${back} ms after CLIENT KILL; next event at the webhook in ${Math.round(delivered)} ms`,
    );
    expect(back, 'subscription back after the kill (ms)').to.be.below(3000); // quiet: 220 ms
    expect(delivered).to.be.below(REAL_TIME_MS);
  });
});
