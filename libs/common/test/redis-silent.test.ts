import { expect } from 'chai';
import { startFaultProxy, type FaultProxy } from '@mgw/testing';
import {
  REDIS_SILENT,
  closeRedis,
  createRedis,
  isRedisUnavailableError,
  waitForRedis,
  type RedisClient,
} from '../src/index.js';

/**
 * A request-path (producer) connection to a Redis that goes silent (a blackholed link, through the
 * test kit's fault proxy on 127.0.0.1): a command fails after REDIS_COMMAND_TIMEOUT_MS, the next
 * ones at once without being sent, and the connection serves again once Redis answers.
 */
describe('Redis: a silent server under a request-path connection', () => {
  let proxy: FaultProxy;
  let client: RedisClient;

  beforeEach(async () => {
    proxy = await startFaultProxy({ port: Number(new URL(process.env.REDIS_URL!).port) });
    client = createRedis(
      { url: proxy.via(process.env.REDIS_URL!), commandTimeoutMs: 500 },
      'producer',
      'silent',
    );
    await waitForRedis(client);
  });
  afterEach(async () => {
    proxy.set('pass');
    await closeRedis(client);
    await proxy.stop();
  });

  const failure = async (p: Promise<unknown>) => {
    const started = Date.now();
    const err = await p.then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    return { err, ms: Date.now() - started };
  };

  it('When Redis goes silent, then a command fails after the timeout as storage unavailable, the next fail at once unsent, and once it answers again the connection serves', async () => {
    proxy.set('blackhole');
    const first = await failure(client.get('silent-probe'));
    expect(first.err?.message).to.equal('Command timed out');
    expect(first.ms).to.be.within(400, 2000);
    expect(isRedisUnavailableError(first.err)).to.equal(true);
    const next = await failure(client.set('silent-probe', '1'));
    expect(next.err?.message).to.equal(REDIS_SILENT);
    expect(next.ms).to.be.below(100);
    expect(isRedisUnavailableError(next.err)).to.equal(true);
    proxy.set('pass');
    const started = Date.now();
    for (;;) {
      const ok = await client.ping().catch(() => undefined);
      if (ok === 'PONG') break;
      expect(Date.now() - started, 'serving again').to.be.below(5000);
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  it('When a silent link is then reset (the connection drops and reconnects), then the new connection serves', async () => {
    proxy.set('blackhole');
    expect((await failure(client.get('silent-probe'))).err?.message).to.equal('Command timed out');
    // The link drops: ioredis reconnects, and its handshake must not be refused as silent.
    proxy.set('reset');
    await new Promise((r) => setTimeout(r, 300));
    proxy.set('pass');
    const started = Date.now();
    for (;;) {
      const ok = await client.ping().catch(() => undefined);
      if (ok === 'PONG') break;
      expect(Date.now() - started, 'serving again after the reconnection').to.be.below(8000);
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  it('When REDIS_COMMAND_TIMEOUT_MS is 0, then a command waits for the answer as before', async () => {
    const patient = createRedis(
      { url: proxy.via(process.env.REDIS_URL!), commandTimeoutMs: 0 },
      'producer',
      'patient',
    );
    try {
      await waitForRedis(patient);
      proxy.set('blackhole');
      const held = patient.ping();
      const settled = await Promise.race([
        held.then(
          () => true,
          () => true,
        ),
        new Promise((r) => setTimeout(() => r(false), 1000)),
      ]);
      expect(settled).to.equal(false);
      proxy.set('pass');
      expect(await held).to.equal('PONG');
    } finally {
      await closeRedis(patient);
    }
  });
});
