import { expect } from 'chai';
import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { closeRedis, createRedis } from '@mgw/common';
import { SessionStore } from '@mgw/store';
import {
  BULL_PREFIX,
  CONNECTION_QUEUE,
  keys,
  type ConnectionReply,
  type ConnectionRequest,
} from '@mgw/contracts';
import { call, createToken, freshDeviceId, startApi, type TestApi } from '../../../../test/helpers/api.js';
import { announceConnectionService } from '../../../../test/helpers/connection-service.js';
import { requestsWaitingAtOnce } from '../../../../test/helpers/waiting-at-once.js';
import { ConnectionLiveness } from '../../../clients/connection-liveness.js';

/**
 * The connection capability's route tests, each against the real app and Redis with a stand-in
 * connection service: /connect, /disconnect and GET /status (many requests at once, the reply
 * timeout), and the connection service's liveness with the requests it shares.
 */

const QR =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

describe('GET|POST /connect and POST /disconnect', () => {
  let t: TestApi;
  let connection: Redis;
  let worker: Worker<ConnectionRequest, ConnectionReply>;
  let answer: (req: ConnectionRequest) => ConnectionReply;
  let withdraw: () => Promise<void>;
  const requests: ConnectionRequest[] = [];

  before(async () => {
    t = await startApi();
    withdraw = await announceConnectionService(t.redis);
    connection = createRedis(t.config.redis.url, 'worker', 'test-connection-service');
    // Answers like the connection service will.
    worker = new Worker<ConnectionRequest, ConnectionReply>(
      CONNECTION_QUEUE,
      async (job: Job<ConnectionRequest>) => {
        // The deadline is the API's to set; the rest of the request is checked field by field.
        const { expiresAt, ...rest } = job.data;
        expect(expiresAt).to.be.a('number').greaterThan(Date.now());
        requests.push(rest);
        return answer(job.data);
      },
      { connection, prefix: BULL_PREFIX },
    );
  });
  beforeEach(() => {
    requests.length = 0;
  });
  after(async () => {
    await worker.close();
    await closeRedis(connection);
    await withdraw();
    await t.close();
  });

  it('When /connect is asked with HEAD, then 405 and no connection request is sent', async () => {
    const deviceId = freshDeviceId();
    const token = await createToken(t, { deviceId });
    const res = await fetch(`${t.api}/connect`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).to.equal(405);
    expect(res.headers.get('allow')).to.equal('GET, POST');
    expect(requests).to.deep.equal([]);
  });

  it('When connecting by QR code (GET, defaults), then 200 with status connecting and the QR data URL', async () => {
    const deviceId = freshDeviceId();
    const token = await createToken(t, { deviceId });
    answer = () => ({ success: true, status: 'connecting', qrCode: QR });

    const res = await call(`${t.api}/connect`, { token });

    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ success: true, status: 'connecting', qrCode: QR });
    expect(requests).to.deep.equal([
      { action: 'connect', deviceId, method: 'qrCode', forceNew: false, rawQrCode: false },
    ]);
  });

  it('When connecting by pairing code (POST), then 200 with the pairing code and the request carries the phone and flags', async () => {
    const deviceId = freshDeviceId();
    const token = await createToken(t, { deviceId });
    answer = () => ({ success: true, status: 'connecting', pairingCode: 'ABCD1234' });

    const res = await call(
      `${t.api}/connect?method=pairingCode&phoneNumber=15551234567&forceNew=true&rawQrCode=false`,
      {
        token,
        method: 'POST',
      },
    );

    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ success: true, status: 'connecting', pairingCode: 'ABCD1234' });
    expect(requests).to.deep.equal([
      {
        action: 'connect',
        deviceId,
        method: 'pairingCode',
        phoneNumber: '15551234567',
        forceNew: true,
        rawQrCode: false,
      },
    ]);
  });

  it('When the device is already connected, then 200 {success, status: connected}', async () => {
    const token = await createToken(t, { deviceId: freshDeviceId() });
    answer = () => ({ success: true, status: 'connected' });
    const res = await call(`${t.api}/connect`, { token, method: 'POST' });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ success: true, status: 'connected' });
  });

  it('When disconnecting, then 200 with the reply message', async () => {
    const deviceId = freshDeviceId();
    const token = await createToken(t, { deviceId });
    answer = () => ({ success: true, message: 'Disconnected and logged out' });
    const res = await call(`${t.api}/disconnect`, { token, method: 'POST' });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ success: true, message: 'Disconnected and logged out' });
    expect(requests).to.deep.equal([{ action: 'disconnect', deviceId }]);
  });

  it('When the connection service refuses, then its httpStatus (default 409) and {success:false, error}', async () => {
    const token = await createToken(t, { deviceId: freshDeviceId() });
    answer = () => ({ success: false, error: 'No session to disconnect' });
    const refused = await call(`${t.api}/disconnect`, { token, method: 'POST' });
    answer = () => ({ success: false, error: 'Pairing is not possible right now', httpStatus: 503 });
    const unavailable = await call(`${t.api}/connect`, { token });

    expect(refused.status).to.equal(409);
    expect(refused.body).to.deep.equal({ success: false, error: 'No session to disconnect' });
    expect(unavailable.status).to.equal(503);
    expect(unavailable.body).to.deep.equal({ success: false, error: 'Pairing is not possible right now' });
  });

  it('When the connection service fails the job, then 502 without its internals', async () => {
    const token = await createToken(t, { deviceId: freshDeviceId() });
    answer = () => {
      throw new Error('socket exploded at /srv/secret/path');
    };
    const res = await call(`${t.api}/connect`, { token });
    expect(res.status).to.equal(502);
    expect(res.body).to.deep.equal({
      success: false,
      error: 'The connection service could not handle the request',
    });
  });
});

describe('many connection requests at once', () => {
  it('When a dozen devices wait for the connection service at once, then each gets its reply and Node sees no listener leak', async () => {
    const t = await startApi();
    const withdraw = await announceConnectionService(t.redis);
    const connection = createRedis(t.config.redis.url, 'worker', 'test-connection-service');
    // The service holds every reply until all twelve requests are waiting for theirs.
    let taken = 0;
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const worker = new Worker<ConnectionRequest, ConnectionReply>(
      CONNECTION_QUEUE,
      async () => {
        taken++;
        await released;
        return { success: true, message: 'Disconnected and logged out' };
      },
      { connection, prefix: BULL_PREFIX, concurrency: 12 },
    );
    try {
      const tokens = await Promise.all(
        Array.from({ length: 12 }, () => createToken(t, { deviceId: freshDeviceId() })),
      );
      const { statuses, leakWarnings } = await requestsWaitingAtOnce({
        start: () => tokens.map((token) => call(`${t.api}/disconnect`, { token, method: 'POST' })),
        allHeld: () => taken === 12,
        release,
        what: 'twelve requests taken',
      });
      expect(statuses).to.deep.equal(Array(12).fill(200));
      expect(leakWarnings).to.deep.equal([]);
    } finally {
      await worker.close();
      await closeRedis(connection);
      await withdraw();
      await t.close();
    }
  });
});

describe('connection service timeout', () => {
  it('When a live service does not answer in time, then 504 and the request is withdrawn from the queue', async () => {
    const t = await startApi({ connectionReplyTimeoutMs: 300 });
    const withdraw = await announceConnectionService(t.redis);
    try {
      await t.services.connection.queue.pause();
      const token = await createToken(t, { deviceId: freshDeviceId() });
      const res = await call(`${t.api}/connect`, { token });
      expect(res.status).to.equal(504);
      expect(res.body).to.deep.equal({
        success: false,
        error: 'The connection service did not answer in time',
      });
      const enqueued = await t.services.metrics.registry.getSingleMetricAsString('mgw_jobs_enqueued_total');
      expect(enqueued).to.match(/queue_type="connection",kind="connect"\} 1/);
      expect(await t.services.connection.queue.getJobCounts('wait', 'prioritized', 'delayed')).to.deep.equal({
        wait: 0,
        prioritized: 0,
        delayed: 0,
      });
    } finally {
      await withdraw();
      await t.services.connection.queue.resume();
      await t.close();
    }
  });
});

describe('GET /status', () => {
  let t: TestApi;
  before(async () => (t = await startApi()));
  after(async () => t.close());

  it('When the device is connected, then status, phone, name and profilePic', async () => {
    const deviceId = freshDeviceId();
    await new SessionStore(t.redis).update(deviceId, 'connected', {
      phone: '15550001111',
      name: 'Shop',
      profilePic: 'https://pps.example/p.jpg',
    });
    const res = await call(`${t.api}/status`, { token: await createToken(t, { deviceId }) });
    expect(res.status).to.equal(200);
    const { sending, ...spec } = res.body;
    expect(spec).to.deep.equal({
      success: true,
      status: 'connected',
      phone: '15550001111',
      name: 'Shop',
      profilePic: 'https://pps.example/p.jpg',
    });
    // Beyond the spec: the account's usage against its caps (the defaults here).
    expect(sending).to.include({ sentToday: 0, firstContactsToday: 0, dailyCap: 1000, firstContactCap: 10 });
  });

  it('When the device is connecting, then only the status (and its sending usage)', async () => {
    const deviceId = freshDeviceId();
    await t.redis.hset(keys.session(deviceId), { status: 'connecting', phone: '15550001111' });
    const res = await call(`${t.api}/status`, { token: await createToken(t, { deviceId }) });
    expect(Object.keys(res.body)).to.have.members(['success', 'status', 'sending']);
    expect(res.body).to.deep.include({ success: true, status: 'connecting' });
  });

  it('When the device has no session record, then disconnected', async () => {
    const res = await call(`${t.api}/status`, { token: await createToken(t, { deviceId: freshDeviceId() }) });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ success: true, status: 'disconnected' });
  });
});

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
      // Not the 20 s reply timeout: quiet: 250 ms.
      expect(elapsed, 'both answered (ms)').to.be.lessThan(10_000);
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
    // A reply timeout of 60 s, so that the lapse's 503 (quiet: 2.3 s) has 10 x room under it.
    const t = await startApi({ connectionReplyTimeoutMs: 60_000 });
    // Alive for 1.5 s and then silent, as a process killed right after the request was queued.
    const withdraw = await announceConnectionService(t.redis, 1500);
    try {
      const token = await createToken(t, { deviceId: freshDeviceId() });
      const started = Date.now();
      const res = await call(`${t.api}/connect`, { token });
      const elapsed = Date.now() - started;
      expect(res.status).to.equal(503);
      expect(res.body).to.deep.equal(DOWN);
      // Not before the service lapsed (1.5 s), and by its lapse, not the reply timeout.
      expect(elapsed, 'answered after (ms)').to.be.within(1000, 25_000); // quiet: 2300 ms
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
