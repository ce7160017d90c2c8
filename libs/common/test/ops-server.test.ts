import { expect } from 'chai';
import client from 'prom-client';
import { closeRedis, createRedis, redisAcceptsWrites, startOpsServer, waitForRedis } from '../src/index.js';

describe('common: the ops server', () => {
  it('When it is scraped, probed and called with a wrong method, then metrics are fresh, readiness writes, and 405/404 are JSON', async () => {
    const redis = createRedis(process.env.REDIS_URL!, 'producer', 'ops-test');
    await waitForRedis(redis, 5000);
    const registry = new client.Registry();
    const gauge = new client.Gauge({ name: 'test_collected', help: 'set on scrape', registers: [registry] });
    let scrapes = 0;
    const ops = await startOpsServer({
      port: 0,
      host: '127.0.0.1',
      registry,
      notReadyError: 'not ready',
      ready: () => redisAcceptsWrites(redis, 'mgw:ready-probe:ops-test'),
      collect: async () => gauge.set(++scrapes),
    });
    const base = `http://127.0.0.1:${ops.port}`;
    try {
      await redis.del('mgw:ready-probe:ops-test');
      const ready = await fetch(`${base}/readyz`);
      const metrics = await (await fetch(`${base}/metrics`)).text();
      const post = await fetch(`${base}/metrics`, { method: 'POST' });
      const unknown = await fetch(`${base}/nope`);

      expect(ready.status).to.equal(200);
      expect(await redis.exists('mgw:ready-probe:ops-test')).to.equal(1);
      expect(metrics).to.match(/^test_collected 1$/m);
      expect(post.status).to.equal(405);
      expect(post.headers.get('allow')).to.equal('GET, HEAD');
      expect(await post.json()).to.deep.equal({ success: false, error: 'Method not allowed' });
      expect(unknown.status).to.equal(404);
      expect(await unknown.json()).to.deep.equal({ success: false, error: 'Not found' });
    } finally {
      await ops.close();
      await closeRedis(redis);
    }
  });
});
