import { expect } from 'chai';
import { startFaultProxy, waitFor, type FaultProxy } from '@mgw/testing';
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
    // The 500 ms command timeout ended it (not before; not mocha's 20 s one): quiet: 505 ms.
    expect(first.ms).to.be.within(400, 5100);
    expect(isRedisUnavailableError(first.err)).to.equal(true);
    // REDIS_SILENT is refused when it is sent, before it is written: its message is the proof
    // that it did not wait for a timeout of its own (no clock).
    const next = await failure(client.set('silent-probe', '1'));
    expect(next.err?.message).to.equal(REDIS_SILENT);
    expect(isRedisUnavailableError(next.err)).to.equal(true);
    proxy.set('pass');
    // Serving again, by the probe's next PING (500 ms apart): quiet: 110 ms.
    await waitFor(async () => (await client.ping().catch(() => undefined)) === 'PONG', {
      timeoutMs: 10_000,
      what: 'the connection serving again',
    });
  });

  it('When a silent link is then reset (the connection drops and reconnects), then the new connection serves', async () => {
    proxy.set('blackhole');
    expect((await failure(client.get('silent-probe'))).err?.message).to.equal('Command timed out');
    // The link drops: ioredis reconnects, and its handshake must not be refused as silent. The
    // link is healed once the client has seen the drop (its event, not a sleep).
    const dropped = new Promise((r) => client.once('close', r));
    proxy.set('reset');
    await dropped;
    proxy.set('pass');
    // Serving again after ioredis's reconnection delay: quiet: 310 ms.
    await waitFor(async () => (await client.ping().catch(() => undefined)) === 'PONG', {
      timeoutMs: 10_000,
      what: 'the connection serving again after the reconnection',
    });
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
      let settled = false;
      const held = patient.ping().finally(() => (settled = true));
      // Outlasts a command sent after it with the 500 ms timeout (an order, not a sleep).
      const timed = await failure(client.get('silent-probe'));
      expect(timed.err?.message).to.equal('Command timed out');
      expect(settled).to.equal(false);
      proxy.set('pass');
      expect(await held).to.equal('PONG');
    } finally {
      await closeRedis(patient);
    }
  });
});
