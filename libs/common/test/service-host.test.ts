import { once } from 'node:events';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import client from 'prom-client';
import winston from 'winston';
import { createServiceRuntime, ServiceHost, type ServiceConfig } from '../src/index.js';

function serviceConfig(): ServiceConfig {
  return {
    nodeEnv: 'test',
    logLevel: 'info',
    shutdownTimeoutMs: 5000,
    redis: { url: process.env.REDIS_URL! },
    ops: { port: 0, host: '127.0.0.1' },
  };
}

function hostMetrics() {
  const registry = new client.Registry();
  const redisUp = new client.Gauge({
    name: 'test_host_redis_up',
    help: 'set by the probes',
    registers: [registry],
  });
  return { registry, redisUp };
}

describe('common: the service host (several services in one process)', () => {
  it('When two parts start on one host, then they share the plain connections but not subscribers or their own options, log as themselves, serve one ops port ready only when both are, and stop in order', async () => {
    const host = new ServiceHost({
      service: 'host-test',
      logLevel: 'info',
      redis: { url: process.env.REDIS_URL! },
      metrics: hostMetrics(),
      parts: ['first', 'second'],
      opsPort: 0,
      notReadyError: 'not ready',
    });
    const lines: Record<string, unknown>[] = [];
    host.logger.clear();
    host.logger.add(
      new winston.transports.Stream({
        stream: new Writable({
          write(chunk: Buffer, _enc, done) {
            lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
            done();
          },
        }),
      }),
    );
    const ops = await host.startOps('127.0.0.1');
    const [a, b] = ['first', 'second'].map((service) =>
      createServiceRuntime({
        service,
        config: serviceConfig(),
        metrics: host.metrics,
        redis: 'worker',
        host,
      }),
    );
    const order: string[] = [];
    // The host's shutdown listens for signals and crashes, as a process's does: removed after.
    const events = ['SIGTERM', 'SIGINT', 'uncaughtException', 'unhandledRejection'] as const;
    const listenersOf = (e: string) => process.listeners(e as NodeJS.Signals) as (() => void)[];
    const listening = new Map(events.map((e) => [e, listenersOf(e)]));
    try {
      const [aLease, bProbe] = [a!.connect('producer', 'lease'), b!.connect('producer', 'probe')];
      const [aSub, bSub] = [a!.connect('subscriber', 'sub'), b!.connect('subscriber', 'sub')];
      const own = a!.connect('worker', 'bull', { enableAutoPipelining: true });
      await a!.waitForRedis(aLease, aSub, bSub, own);
      expect(a!.redis).to.equal(b!.redis);
      expect(aLease).to.equal(bProbe);
      expect(a!.connect('worker', 'bull')).to.equal(b!.connect('worker', 'bull'));
      expect(aSub).not.to.equal(bSub);
      expect(own).not.to.equal(b!.connect('worker', 'bull'));
      expect(await a!.redis.client('GETNAME')).to.equal('mgw-host-test-general');
      expect(await aSub.client('GETNAME')).to.equal('mgw-first-sub');
      expect(a!.metrics).to.equal(b!.metrics);
      expect(a!.defaultMetrics).to.equal(b!.defaultMetrics);

      a!.logger.info('from the first');
      b!.logger.child({ requestId: 'r1' }).info('from the second');
      expect(lines.map((l) => [l.service, l.message])).to.deep.equal([
        ['first', 'from the first'],
        ['second', 'from the second'],
      ]);

      // Ready once every expected part has said how it is ready, and only while each is.
      const readyz = async () => (await fetch(`http://127.0.0.1:${ops.port}/readyz`)).status;
      await a!.startOps({ probe: aLease, probeKey: 'mgw:ready-probe:host-first', notReadyError: 'x' });
      expect(await readyz()).to.equal(503);
      let secondServing = false;
      const bOps = await b!.startOps({
        probe: bProbe,
        probeKey: 'mgw:ready-probe:host-second',
        notReadyError: 'x',
        serving: () => secondServing,
        notServingReason: () => 'not subscribed to x: testing',
      });
      expect(bOps.port).to.equal(ops.port);
      const notReady = await fetch(`http://127.0.0.1:${ops.port}/readyz`);
      expect(notReady.status).to.equal(503);
      expect(await notReady.json()).to.deep.equal({
        success: false,
        error: 'not ready',
        details: { reason: 'second: not subscribed to x: testing' },
      });
      secondServing = true;
      expect(await readyz()).to.equal(200);
      const metrics = await (await fetch(`http://127.0.0.1:${ops.port}/metrics`)).text();
      expect(metrics.match(/^# TYPE test_host_redis_up /gm)).to.have.length(1);
      expect(metrics.match(/^# TYPE process_resident_memory_bytes /gm)).to.have.length(1);

      b!.installShutdown([{ name: 'second work', run: () => void order.push('second') }]);
      a!.installShutdown([
        { name: 'first work', run: () => void order.push('first') },
        { name: 'first ops', run: () => void order.push('first ops') },
      ]);
      await host.stop();
      expect(order).to.deep.equal(['first', 'first ops', 'second']);
      // quit() resolves on Redis's OK; the socket closes just after.
      const conns = [a!.redis, aLease, aSub, bSub, own];
      await Promise.all(conns.map((c) => (c.status === 'end' ? undefined : once(c, 'end'))));
      expect(conns.map((c) => c.status)).to.deep.equal(conns.map(() => 'end'));
      expect(await fetch(`http://127.0.0.1:${ops.port}/healthz`).catch(() => 'closed')).to.equal('closed');
    } finally {
      await host.stop();
      for (const e of events)
        for (const l of listenersOf(e)) if (!listening.get(e)!.includes(l)) process.removeListener(e, l);
    }
  });
});
