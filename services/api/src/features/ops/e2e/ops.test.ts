import { expect } from 'chai';
import { waitForRedis } from '@mgw/common';
import { freePort, startRedisServer } from '@mgw/testing';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
} from '../../../../test/helpers/api.js';

describe('API operations', () => {
  let t: TestApi;
  before(async () => (t = await startApi({ otpWaitTimeoutMs: 300 })));
  after(async () => t.close());

  it('When /healthz and /readyz are called without a token, then 200', async () => {
    const health = await call(`${t.url}/healthz`);
    const ready = await call(`${t.url}/readyz`);
    expect(health.status).to.equal(200);
    expect(health.body).to.deep.equal({ success: true, status: 'ok' });
    expect(ready.status).to.equal(200);
    expect(ready.body).to.deep.equal({ success: true, status: 'ready' });
  });

  it('When /metrics is scraped on the ops port, then Prometheus text with requests by route template (no ids), jobs, auth rejections and Redis memory', async () => {
    const deviceId = freshDeviceId();
    const token = await createToken(t, { deviceId });
    await markConnected(t.redis, deviceId);
    const sent = await call(`${t.api}/send`, { token, json: { to: '15551234567', text: 'x' } });
    await call(`${t.api}/messages/${String(sent.body.messageId)}`, { token });
    await call(`${t.api}/status`);

    const res = await fetch(`${t.metricsUrl}/metrics`);
    const text = await res.text();
    const memory = await t.redis.info('memory');

    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/plain/);
    expect(text).to.match(
      /mgw_http_requests_total\{route="\/api\/messenger\/v1\/send",method="POST",status="202"\} 1/,
    );
    expect(text).to.match(/route="\/api\/messenger\/v1\/messages\/:id",method="GET",status="200"/);
    expect(text).to.match(/route="\/api\/messenger\/v1\/status",method="GET",status="401"/);
    expect(text).to.include('mgw_http_request_duration_seconds_bucket');
    expect(text).to.match(/mgw_jobs_enqueued_total\{queue_type="send",kind="send"\} 1/);
    expect(text).to.match(/mgw_auth_rejections_total\{reason="missing"\} 1/);
    expect(text).not.to.include(String(sent.body.messageId));
    expect(text).to.match(/^mgw_redis_up 1$/m);
    const used = Number(/^mgw_redis_memory_used_bytes (\d+)$/m.exec(text)?.[1]);
    const usedNow = Number(/^used_memory:(\d+)/m.exec(memory)?.[1]);
    expect(used, 'used_memory read on this scrape').to.be.within(usedNow * 0.5, usedNow * 2);
    expect(text).to.match(/^mgw_redis_memory_max_bytes \d+$/m);
    await t.services.acceptor.queue(deviceId).obliterate({ force: true });
  });

  it('When a path is unknown outside the API (/metrics included, on the public port), then 404 JSON', async () => {
    for (const path of ['/nothing-here', '/metrics']) {
      const res = await call(`${t.url}${path}`);
      expect(res.status, path).to.equal(404);
      expect(res.body).to.deep.equal({ success: false, error: 'Not found' });
    }
  });

  it('When the ops port is probed, then /healthz and /readyz answer there too, and a wrong method is 405', async () => {
    const health = await call(`${t.metricsUrl}/healthz`);
    const ready = await call(`${t.metricsUrl}/readyz`);
    const post = await call(`${t.url}/healthz`, { method: 'POST' });
    expect([health.status, ready.status]).to.deep.equal([200, 200]);
    expect(ready.body).to.deep.equal({ success: true, status: 'ready' });
    expect(post.status).to.equal(405);
    expect(post.headers.get('allow')).to.equal('GET, HEAD');
    expect(post.body).to.deep.equal({ success: false, error: 'Method not allowed' });
  });

  it('When a request carries X-Request-Id, then it is echoed; otherwise one is generated', async () => {
    const given = await call(`${t.url}/healthz`, { headers: { 'x-request-id': 'abc-123' } });
    const generated = await call(`${t.url}/healthz`);
    expect(given.headers.get('x-request-id')).to.equal('abc-123');
    expect(generated.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
  });

  it('When responding, then helmet security headers are set and no X-Powered-By', async () => {
    const res = await call(`${t.url}/healthz`);
    expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(res.headers.get('x-frame-options')).to.equal('SAMEORIGIN');
    expect(res.headers.get('x-powered-by')).to.equal(null);
  });

  it('When requests are served, then one access-log line each with method, route, status, duration and request id, and no token, code or text', async () => {
    const deviceId = freshDeviceId();
    const token = await createToken(t, { deviceId });
    await markConnected(t.redis, deviceId);
    await call(`${t.api}/send`, {
      token,
      tokenInQuery: true,
      json: { to: '15551234567', text: 'very secret text' },
      headers: { 'x-request-id': 'log-test-1' },
    });
    await call(`${t.api}/otp?token=${token}`, {
      json: { phone: '15551234567', code: '55667788', language: 'Arabic' },
      headers: { 'x-request-id': 'log-test-2' },
    });

    const lines = t.logs.filter((l) => l.requestId === 'log-test-1' && l.message === 'request');
    expect(lines).to.have.length(1);
    expect(lines[0]).to.include({ method: 'POST', route: '/api/messenger/v1/send', status: 202 });
    expect(lines[0]!.durationMs).to.be.a('number');
    const all = JSON.stringify(t.logs);
    expect(all).not.to.include(token);
    expect(all).not.to.include('very secret text');
    expect(all).not.to.include('55667788');
    // express-rate-limit reports misconfiguration through its logger: there must be none.
    expect(t.logs.filter((l) => String(l.message).startsWith('rate limiter'))).to.deep.equal([]);
    await t.services.acceptor.queue(deviceId).obliterate({ force: true });
  });
});

describe('API with Redis down', function () {
  this.timeout(40_000);
  let t: TestApi;
  before(async () => (t = await startApi({ redis: { url: `redis://127.0.0.1:${await freePort()}` } })));
  after(async () => t.close());

  it('When Redis is not reachable, then API calls answer 503 JSON at once and /readyz is 503', async () => {
    const started = Date.now();
    const status = await call(`${t.api}/status`, { token: 'mgw_anything' });
    const send = await call(`${t.api}/send`, {
      token: 'mgw_anything',
      json: { to: '15551234567', text: 'x' },
    });
    const ready = await call(`${t.url}/readyz`);
    const health = await call(`${t.url}/healthz`);

    for (const res of [status, send]) {
      expect(res.status).to.equal(503);
      expect(res.body).to.deep.equal({
        success: false,
        error: 'Service unavailable: storage is not reachable',
      });
    }
    expect(ready.status).to.equal(503);
    expect(ready.body).to.deep.equal({
      success: false,
      error: 'Service unavailable: storage is not reachable',
    });
    expect(health.status).to.equal(200);
    // Not a hang: 10 x the four calls' time (2.3 s measured alone at load 60), inside the test's
    // timeout. How fast is not what this shows.
    expect(Date.now() - started).to.be.lessThan(25_000); // quiet: 2300 ms
  });
});

describe('API when Redis stops while it runs', () => {
  it('When the private Redis is stopped, then requests answer 503 JSON instead of hanging', async () => {
    const redis = await startRedisServer();
    const t = await startApi({ redis: { url: redis.url } });
    try {
      await waitForRedis(t.redis, 5000);
      const deviceId = freshDeviceId();
      const token = await createToken(t, { deviceId });
      await markConnected(t.redis, deviceId);
      const before = await call(`${t.api}/send`, { token, json: { to: '15551234567', text: 'x' } });
      expect(before.status).to.equal(202);

      await redis.stop();
      const status = await call(`${t.api}/status`, { token });
      const send = await call(`${t.api}/send`, { token, json: { to: '15551234567', text: 'x' } });
      const ready = await call(`${t.url}/readyz`);

      for (const res of [status, send]) {
        expect(res.status).to.equal(503);
        expect(res.body).to.deep.equal({
          success: false,
          error: 'Service unavailable: storage is not reachable',
        });
      }
      expect(ready.status).to.equal(503);
    } finally {
      await t.close();
      await redis.stop();
    }
  });
});
