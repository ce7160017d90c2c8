import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { closeRedis, createRedis, waitForRedis } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { fillRedisToMaxmemory, startRedisServer, type RedisServerHandle } from '@mgw/testing';
import { call, createToken, freshDeviceId, markConnected, startApi, type TestApi } from './helpers/api.js';

const UNAVAILABLE = { success: false, error: 'Service unavailable: storage is not reachable' };

describe('API with Redis at maxmemory (noeviction)', function () {
  this.timeout(60_000);
  let server: RedisServerHandle;
  let t: TestApi;
  let token: string;
  let deviceId: string;
  let filler: Redis;
  /**
   * Rejections nobody handled in time. A service process has no handler for them, so Node (its
   * default `--unhandled-rejections=throw`) would stop the whole API on the first one.
   */
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason instanceof Error ? reason.message : reason);
  before(async () => {
    process.on('unhandledRejection', onUnhandled);
    server = await startRedisServer({ args: ['--maxmemory', '8mb', '--maxmemory-policy', 'noeviction'] });
    t = await startApi({ redis: { url: server.url } });
    await waitForRedis(t.redis, 5000);
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    await markConnected(t.redis, deviceId);
    filler = createRedis(server.url, 'producer', 'filler');
    await waitForRedis(filler, 5000);
  });
  after(async () => {
    process.off('unhandledRejection', onUnhandled);
    await closeRedis(filler);
    await t?.close();
    await server?.stop();
  });

  /** Every message record of the device with its status, and whether its job exists. */
  async function records(): Promise<{ id: string; status: string; hasJob: boolean }[]> {
    const found = await t.redis.keys(keys.message(deviceId, '*'));
    const queue = t.services.acceptor.queue(deviceId);
    return Promise.all(
      found.map(async (key) => {
        const id = key.slice(key.lastIndexOf(':') + 1);
        const status = (await t.redis.hget(key, 'status')) ?? '';
        return { id, status, hasJob: (await queue.getJob(id)) !== undefined };
      }),
    );
  }

  it('When Redis is full, then /send, /otp and the rest answer 503 JSON (never 500), /readyz is 503 on both ports, and no record is left queued without a job', async () => {
    const accepted = await call(`${t.api}/send`, { token, json: { to: '15551234567', text: 'before' } });
    expect(accepted.status).to.equal(202);
    const before = await records();

    const { refusal, maxBytes } = await fillRedisToMaxmemory(filler);
    expect(refusal.message).to.match(/^OOM command not allowed/);
    const send = await call(`${t.api}/send`, {
      token,
      json: { to: ['15551234567', '15551234568'], text: 'x' },
    });
    const single = await call(`${t.api}/send`, { token, json: { to: '15551234569', text: 'x' } });
    const otp = await call(`${t.api}/otp`, { token, json: { phone: '15551234567', code: '123456' } });
    const wrongToken = await call(`${t.api}/status`, { token: 'mgw_wrong' });
    // Even reads: their per-token rate-limit counter is a write.
    const status = await call(`${t.api}/status`, { token });
    const health = await call(`${t.url}/healthz`);
    const ready = await call(`${t.url}/readyz`);
    const opsReady = await call(`${t.metricsUrl}/readyz`);
    const metrics = await (await fetch(`${t.metricsUrl}/metrics`)).text();

    for (const res of [send, single, otp, wrongToken, status]) {
      expect(res.status).to.equal(503);
      expect(res.body).to.deep.equal(UNAVAILABLE);
    }
    expect(health.status, 'the process is alive: not restarted for a full Redis').to.equal(200);
    expect(ready.status).to.equal(503);
    expect(ready.body).to.deep.equal(UNAVAILABLE);
    expect(opsReady.status).to.equal(503);
    expect(metrics).to.match(/^mgw_redis_up 0$/m);
    const used = Number(/^mgw_redis_memory_used_bytes (\d+)$/m.exec(metrics)?.[1]);
    const max = Number(/^mgw_redis_memory_max_bytes (\d+)$/m.exec(metrics)?.[1]);
    expect(max).to.equal(maxBytes);
    expect(used / max).to.be.greaterThan(1);
    expect(t.logs.filter((l) => l.status === 500)).to.deep.equal([]);

    const after = await records();
    expect(after, 'no record was written while Redis was full').to.deep.equal(before);
    expect(after.filter((r) => r.status === 'queued' && !r.hasJob)).to.deep.equal([]);
  });

  it('When a list would fill Redis in the middle of its transaction, then it is refused whole (503): no job, no content, no quota used, nothing queued', async () => {
    // Room for a small request, not for 1,000 jobs: the transaction is refused as a whole.
    const used = Number(/^used_memory:(\d+)/m.exec(await filler.info('memory'))?.[1]);
    await filler.config('SET', 'maxmemory', String(used + 512 * 1024));
    const queue = t.services.acceptor.queue(deviceId);
    const jobsBefore = await queue.count();
    const quotaBefore = await t.redis.hgetall(keys.deviceQueue(deviceId));
    const to = Array.from({ length: 1000 }, (_, i) => String(15559000000 + i));
    const big = await call(`${t.api}/send`, { token, json: { to, text: 'y'.repeat(60_000) } });
    expect(big.status).to.equal(503);
    expect(big.body).to.deep.equal(UNAVAILABLE);
    expect(await queue.count()).to.equal(jobsBefore);
    expect(await t.redis.keys(keys.content(deviceId, '*'))).to.have.length(jobsBefore > 0 ? 1 : 0);
    expect(await t.redis.hgetall(keys.deviceQueue(deviceId))).to.deep.equal(quotaBefore);
    expect((await records()).filter((r) => r.status === 'queued' && !r.hasJob)).to.deep.equal([]);
    expect(unhandled, 'a rejection no one was waiting for yet (it would stop the API)').to.deep.equal([]);
  });

  it('When a long list (accepted in pieces) fills Redis after some pieces were committed, then those are taken back: 503, no job, no content, no quota used, no record', async () => {
    const enqueued = async () =>
      (await t.services.metrics.jobsEnqueued.get()).values.reduce((sum, v) => sum + v.value, 0);
    const used = Number(/^used_memory:(\d+)/m.exec(await filler.info('memory'))?.[1]);
    // Room for a piece or two of 500 messages, not for 5,000.
    await filler.config('SET', 'maxmemory', String(used + 1024 * 1024));
    const queue = t.services.acceptor.queue(deviceId);
    const jobsBefore = await queue.count();
    const contentsBefore = await t.redis.keys(keys.content(deviceId, '*'));
    const quotaBefore = await t.redis.hgetall(keys.deviceQueue(deviceId));
    const recordsBefore = await records();
    const enqueuedBefore = await enqueued();
    const to = Array.from({ length: 5000 }, (_, i) => String(15558000000 + i));
    const big = await call(`${t.api}/send`, { token, json: { to, text: 'z'.repeat(2000) } });
    expect(big.status).to.equal(503);
    expect(big.body).to.deep.equal(UNAVAILABLE);
    expect(await enqueued(), 'some pieces were committed before Redis filled up').to.be.greaterThan(
      enqueuedBefore,
    );
    expect(await queue.count()).to.equal(jobsBefore);
    expect(await t.redis.keys(keys.content(deviceId, '*'))).to.deep.equal(contentsBefore);
    expect(await t.redis.hgetall(keys.deviceQueue(deviceId))).to.deep.equal(quotaBefore);
    expect(await records()).to.deep.equal(recordsBefore);
    expect(t.logs.filter((l) => /could not take back/.test(String(l.message)))).to.deep.equal([]);
    expect(unhandled, 'a rejection no one was waiting for yet (it would stop the API)').to.deep.equal([]);
  });

  it('When memory is freed again, then the API is ready and accepts messages at once', async () => {
    await filler.flushdb();
    await filler.config('SET', 'maxmemory', String(8 * 1024 * 1024));
    // FLUSHDB dropped the token and the session too: set them up again.
    token = await createToken(t, { deviceId });
    await markConnected(t.redis, deviceId);
    const ready = await call(`${t.url}/readyz`);
    const send = await call(`${t.api}/send`, { token, json: { to: '15551234567', text: 'after' } });
    expect(ready.status).to.equal(200);
    expect(send.status).to.equal(202);
    await t.services.acceptor.queue(deviceId).obliterate({ force: true });
  });
});
