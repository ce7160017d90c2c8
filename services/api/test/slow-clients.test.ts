import { expect } from 'chai';
import http from 'node:http';
import { createToken, freshDeviceId, markConnected, startApi, type TestApi } from './helpers/api.js';
import { head, rawRequest, type RawPart } from './helpers/raw-http.js';

const TIMEOUT = { success: false, error: 'Request timeout: the request did not arrive in time' };

describe('API: slow clients are closed in seconds, with a JSON answer', function () {
  this.timeout(40_000);
  let t: TestApi;
  let sendHead: string;
  let token: string;
  let deviceId: string;
  before(async () => {
    t = await startApi({
      otpWaitTimeoutMs: 2600,
      http: { headersTimeoutMs: 1000, requestTimeoutMs: 2000, bodyIdleTimeoutMs: 500 },
    });
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    await markConnected(t.redis, deviceId);
    sendHead = head('POST', '/api/messenger/v1/send', {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'content-length': 100,
    });
  });
  after(async () => t.close());

  it('When a client declares 100 bytes and sends 10, then 408 JSON and the connection closes after the idle timeout', async () => {
    const res = await rawRequest(t.url, [sendHead, '{"to":"155', { pauseMs: 10_000 }]);
    expect(res.status).to.equal(408);
    expect(res.body).to.deep.equal(TIMEOUT);
    expect(res.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/);
    // Closed by the idle timeout (500 ms after the last byte): not before it, and long before the
    // client's 10 s pause ends.
    expect(res.closedMs, 'closed after the idle timeout').to.be.within(450, 6000); // quiet: 580 ms
  });

  it('When a body trickles in (never idle long, never done), then the whole-request deadline answers 408 JSON', async () => {
    // 400 bytes of a declared 10,000, one every 200 ms: never idle for the 500 ms idle timeout, and
    // 80 s of it, so that only the 2 s deadline can end it within the bound below.
    const trickle: RawPart[] = [
      head('POST', '/api/messenger/v1/send', {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'content-length': 10_000,
      }),
    ];
    for (let i = 0; i < 400; i++) trickle.push(' ', { pauseMs: 200 });
    const res = await rawRequest(t.url, trickle, { waitMs: 60_000 });
    expect(res.status).to.equal(408);
    expect(res.body).to.deep.equal(TIMEOUT);
    expect(res.headers['content-type']).to.equal('application/json; charset=utf-8');
    expect(res.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/);
    // HTTP_REQUEST_TIMEOUT_MS 2000, checked every 250 ms: not before it, and by it.
    expect(res.closedMs).to.be.within(1900, 21_000); // quiet: 2100 ms
  });

  it('When a request was answered before its body came (a GET with a body that never comes), then the deadline closes it without a second answer', async () => {
    const res = await rawRequest(
      t.url,
      [head('GET', '/api/messenger/v1/status', { authorization: `Bearer ${token}`, 'content-length': 1000 })],
      { waitMs: 30_000 },
    );
    expect(res.status).to.equal(200);
    expect(res.raw.match(/HTTP\/1\.1 /g), 'one answer only').to.have.length(1);
    // By the 2 s deadline (nothing else would close it before the wait ends: closedMs -1).
    expect(res.closedMs).to.be.within(1900, 23_000); // quiet: 2220 ms
  });

  it('When the headers never finish, then the headers deadline answers 408 JSON', async () => {
    const res = await rawRequest(
      t.url,
      ['GET /api/messenger/v1/status HTTP/1.1\r\nHost: x\r\nX-Slow: 1', { pauseMs: 10_000 }],
      { waitMs: 30_000 },
    );
    expect(res.status).to.equal(408);
    expect(res.body).to.deep.equal(TIMEOUT);
    // By the 1 s headers deadline, not Node's 60 s one.
    expect(res.closedMs).to.be.within(900, 11_000); // quiet: 1050 ms
  });

  it('When a request has arrived and its answer takes longer than the request deadline (an OTP wait), then it is not cut', async () => {
    // No sender runs: the OTP waits OTP_WAIT_TIMEOUT_MS (2.6 s), past HTTP_REQUEST_TIMEOUT_MS (2 s).
    const body = JSON.stringify({ phone: '15551234567', code: '123456' });
    const res = await rawRequest(
      t.url,
      [
        head('POST', '/api/messenger/v1/otp', {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        }),
        body,
      ],
      { untilAnswered: true, waitMs: 6000 },
    );
    expect(res.status).to.equal(504);
    expect(res.answeredMs).to.be.greaterThan(2500);
    await t.services.acceptor.queue(deviceId).obliterate({ force: true });
  });

  it('When a client keeps its connection idle longer than 5 s (Node’s default), then its next request on it is answered', async function () {
    this.timeout(20_000);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const status = () =>
      new Promise<{ status: number; port: number }>((resolve, reject) => {
        const req = http.get(
          `${t.api}/status`,
          { agent, headers: { authorization: `Bearer ${token}` } },
          (res) => {
            const port = res.socket.localPort ?? 0;
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode ?? 0, port }));
          },
        );
        req.on('error', reject);
      });
    try {
      const first = await status();
      await new Promise((r) => setTimeout(r, 6_500));
      const second = await status();
      expect([first.status, second.status]).to.deep.equal([200, 200]);
      expect(second.port, 'the same connection, kept open').to.equal(first.port);
    } finally {
      agent.destroy();
    }
  });
});
