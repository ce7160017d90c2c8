import { once } from 'node:events';
import { expect } from 'chai';
import client from 'prom-client';
import { createServiceRuntime, type ServiceConfig } from '../src/index.js';
import { runScript } from './child-script.js';

function serviceConfig(): ServiceConfig {
  return {
    nodeEnv: 'test',
    logLevel: 'silent',
    shutdownTimeoutMs: 5000,
    redis: { url: process.env.REDIS_URL! },
    ops: { port: 0, host: '127.0.0.1' },
  };
}

function serviceMetrics() {
  const registry = new client.Registry();
  const redisUp = new client.Gauge({
    name: 'test_redis_up',
    help: 'set by the probe',
    registers: [registry],
  });
  return { registry, redisUp };
}

describe('common: the service runtime', () => {
  it('When it starts, then its connections are named by purpose, /readyz writes the probe, /metrics serves the service registry then Node defaults, and close() ends every connection', async () => {
    const rt = createServiceRuntime({
      service: 'runtime-test',
      config: serviceConfig(),
      metrics: serviceMetrics(),
      redis: 'worker',
    });
    const probe = rt.connect('producer', 'probe');
    await rt.waitForRedis(probe);
    const ops = await rt.startOps({
      probe,
      probeKey: 'mgw:ready-probe:runtime-test',
      notReadyError: 'not ready',
    });
    try {
      await rt.redis.del('mgw:ready-probe:runtime-test');
      const ready = await fetch(`http://127.0.0.1:${ops.port}/readyz`);
      const metrics = await (await fetch(`http://127.0.0.1:${ops.port}/metrics`)).text();

      expect(await rt.redis.client('GETNAME')).to.equal('mgw-runtime-test');
      expect(await probe.client('GETNAME')).to.equal('mgw-runtime-test-probe');
      expect(ready.status).to.equal(200);
      expect(await ready.json()).to.deep.equal({ success: true, status: 'ready' });
      expect(await rt.redis.exists('mgw:ready-probe:runtime-test')).to.equal(1);
      expect(metrics).to.match(/^test_redis_up 1$/m);
      expect(metrics.indexOf('test_redis_up')).to.be.lessThan(metrics.indexOf('nodejs_'));
    } finally {
      await ops.close();
      await rt.close();
    }
    // quit() resolves on Redis's OK; the socket closes just after.
    await Promise.all([rt.redis, probe].map((c) => (c.status === 'end' ? undefined : once(c, 'end'))));
    expect([rt.redis.status, probe.status]).to.deep.equal(['end', 'end']);
  });

  it('When the service says it is not serving, then /readyz is 503 with its error while Redis still counts as up, and 200 once it serves', async () => {
    const metrics = serviceMetrics();
    const rt = createServiceRuntime({
      service: 'runtime-test',
      config: serviceConfig(),
      metrics,
      redis: 'worker',
    });
    const probe = rt.connect('producer', 'probe');
    await rt.waitForRedis(probe);
    let serving = false;
    const ops = await rt.startOps({
      probe,
      probeKey: 'mgw:ready-probe:runtime-test',
      notReadyError: 'not ready',
      serving: () => serving,
      notServingReason: () => 'not subscribed to x: testing',
    });
    try {
      const before = await fetch(`http://127.0.0.1:${ops.port}/readyz`);
      const gauge = await (await fetch(`http://127.0.0.1:${ops.port}/metrics`)).text();
      serving = true;
      const after = await fetch(`http://127.0.0.1:${ops.port}/readyz`);

      expect(before.status).to.equal(503);
      expect(await before.json()).to.deep.equal({
        success: false,
        error: 'not ready',
        details: { reason: 'not subscribed to x: testing' },
      });
      expect(gauge).to.match(/^test_redis_up 1$/m);
      expect(after.status).to.equal(200);
    } finally {
      await ops.close();
      await rt.close();
    }
  });

  it('When the process gets SIGTERM, then the service steps run while Redis is still open, then the connections close without error, and it exits 0', async () => {
    const script = `
      import client from 'prom-client';
      import { createServiceRuntime, runService } from '@mgw/common';
      runService('runtime-test', async () => {
        const registry = new client.Registry();
        const rt = createServiceRuntime({
          service: 'runtime-test',
          config: ${JSON.stringify({ ...serviceConfig(), logLevel: 'info' })},
          metrics: { registry, redisUp: { set: () => undefined } },
          redis: 'worker',
        });
        const subscriber = rt.connect('subscriber', 'sub');
        await rt.waitForRedis(subscriber);
        rt.installShutdown([
          { name: 'first', run: async () => rt.logger.info('step ran', { redis: await rt.redis.ping() }) },
        ]);
        process.kill(process.pid, 'SIGTERM');
      });
    `;
    const { code, lines, stderr } = await runScript(script);

    expect(code, stderr).to.equal(0);
    expect(lines.map((l) => l.message)).to.deep.equal(['shutting down', 'step ran', 'shutdown complete']);
    expect(lines[1]).to.include({ service: 'runtime-test', redis: 'PONG' });
  });
});
