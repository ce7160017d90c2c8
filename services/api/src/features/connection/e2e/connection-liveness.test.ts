import { expect } from 'chai';
import { Worker } from 'bullmq';
import { closeRedis, createRedis } from '@mgw/common';
import {
  BULL_PREFIX,
  CONNECTION_QUEUE,
  keys,
  type ConnectionReply,
  type ConnectionRequest,
} from '@mgw/contracts';
import { ConnectionLiveness } from '../../../clients/connection-liveness.js';
import { call, createToken, freshDeviceId, startApi } from '../../../../test/helpers/api.js';
import { announceConnectionService } from '../../../../test/helpers/connection-service.js';

const DOWN = { success: false, error: 'The connection service is not running; try again shortly' };

describe('/connect and /disconnect: liveness of the connection service, shared requests', function () {
  this.timeout(30_000);

  it('When no connection service is alive, then /connect and /disconnect answer 503 at once and enqueue nothing', async () => {
    const t = await startApi({ connectionReplyTimeoutMs: 20_000 });
    try {
      const token = await createToken(t, { deviceId: freshDeviceId() });
      const started = Date.now();
      const connect = await call(`${t.api}/connect`, { token });
      const disconnect = await call(`${t.api}/disconnect`, { token, method: 'POST' });
      const elapsed = Date.now() - started;
      expect([connect.status, disconnect.status]).to.deep.equal([503, 503]);
      expect(connect.body).to.deep.equal(DOWN);
      expect(disconnect.body).to.deep.equal(DOWN);
      expect(elapsed, 'both answered (ms)').to.be.lessThan(1000);
      expect(await t.services.connection.queue.count()).to.equal(0);
    } finally {
      await t.close();
    }
  });

  it('When a connection service starts right after a 503, then the next /connect is served by it (a "no" is not cached)', async () => {
    const t = await startApi();
    const connection = createRedis(t.config.redis.url, 'worker', 'test-connection-service');
    let withdraw: (() => Promise<void>) | undefined;
    let worker: Worker<ConnectionRequest, ConnectionReply> | undefined;
    try {
      const token = await createToken(t, { deviceId: freshDeviceId() });
      const down = await call(`${t.api}/connect?rawQrCode=true`, { token });
      expect(down.status).to.equal(503);
      worker = new Worker<ConnectionRequest, ConnectionReply>(
        CONNECTION_QUEUE,
        async () => ({ success: true, status: 'connecting', qrCode: 'raw-qr' }),
        { connection, prefix: BULL_PREFIX },
      );
      withdraw = await announceConnectionService(t.redis);
      const up = await call(`${t.api}/connect?rawQrCode=true`, { token });
      expect(up.status, JSON.stringify(up.body)).to.equal(200);
      expect(up.body).to.deep.equal({ success: true, status: 'connecting', qrCode: 'raw-qr' });
    } finally {
      await worker?.close();
      await closeRedis(connection);
      await withdraw?.();
      await t.close();
    }
  });

  it('When the liveness is read with a long cache, then a "yes" is kept for the cache time and a "no" is read again at once', async () => {
    const t = await startApi();
    const liveness = new ConnectionLiveness(t.redis, 60_000);
    let withdraw: (() => Promise<void>) | undefined;
    try {
      expect(await liveness.alive()).to.equal(false);
      withdraw = await announceConnectionService(t.redis);
      expect(await liveness.alive(), 'a service announced after a "no"').to.equal(true);
      await withdraw();
      withdraw = undefined;
      expect(await t.redis.zcard(keys.connectionWorkers())).to.equal(0);
      expect(await liveness.alive(), 'a "yes" within the cache time').to.equal(true);
    } finally {
      await withdraw?.();
      await t.close();
    }
  });

  it('When the last connection service lapses while a request waits, then 503 within seconds and the request is withdrawn', async () => {
    const t = await startApi({ connectionReplyTimeoutMs: 20_000 });
    // Alive for 1.5 s and then silent, as a process killed right after the request was queued.
    const withdraw = await announceConnectionService(t.redis, 1500);
    try {
      const token = await createToken(t, { deviceId: freshDeviceId() });
      const started = Date.now();
      const res = await call(`${t.api}/connect`, { token });
      const elapsed = Date.now() - started;
      expect(res.status).to.equal(503);
      expect(res.body).to.deep.equal(DOWN);
      expect(elapsed, 'answered after (ms)').to.be.within(1000, 4000);
      expect(await t.services.connection.queue.getJobCounts('wait', 'prioritized')).to.deep.equal({
        wait: 0,
        prioritized: 0,
      });
    } finally {
      await withdraw();
      await t.close();
    }
  });

  it('When identical requests of one device arrive together, then one job answers them all and a different one gets its own', async () => {
    const t = await startApi();
    const withdraw = await announceConnectionService(t.redis);
    const connection = createRedis(t.config.redis.url, 'worker', 'test-connection-service');
    const seen: ConnectionRequest[] = [];
    const worker = new Worker<ConnectionRequest, ConnectionReply>(
      CONNECTION_QUEUE,
      async (job) => {
        seen.push(job.data);
        await new Promise((r) => setTimeout(r, 300));
        return job.data.action === 'connect' && job.data.rawQrCode
          ? { success: true, status: 'connecting', qrCode: 'raw-qr' }
          : { success: true, message: 'Disconnected and logged out' };
      },
      { connection, prefix: BULL_PREFIX, concurrency: 10 },
    );
    try {
      const deviceId = freshDeviceId();
      const [tokenA, tokenB] = [await createToken(t, { deviceId }), await createToken(t, { deviceId })];
      const answers = await Promise.all([
        ...[tokenA, tokenB, tokenA].map((token) => call(`${t.api}/disconnect`, { token, method: 'POST' })),
        call(`${t.api}/connect?rawQrCode=true`, { token: tokenB }),
      ]);
      expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200, 200]);
      for (const a of answers.slice(0, 3)) {
        expect(a.body).to.deep.equal({ success: true, message: 'Disconnected and logged out' });
      }
      expect(answers[3]!.body).to.deep.equal({ success: true, status: 'connecting', qrCode: 'raw-qr' });
      expect(seen.map((r) => r.action).sort()).to.deep.equal(['connect', 'disconnect']);
    } finally {
      await worker.close();
      await closeRedis(connection);
      await withdraw();
      await t.close();
    }
  });
});
