import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { call, createToken, freshDeviceId, markConnected, startApi, type TestApi } from './helpers/api.js';
import { head, rawRequest } from './helpers/raw-http.js';

// Request bodies and client errors, against the real app and Redis: the body each route takes
// (none, small, compressed, streamed), the errors Node's HTTP parser answers itself (in the JSON
// envelope), and a known path called with a method it does not serve (405).

const NO_BODY = {
  success: false,
  error: 'Invalid request data',
  details: [{ path: [], message: 'This endpoint takes no request body' }],
};
const BAD_METHOD = {
  success: false,
  error: 'Invalid request data',
  details: [{ path: ['method'], message: 'method must be one of [qrCode, pairingCode]' }],
};

describe('API request bodies, route by route', () => {
  let t: TestApi;
  let token: string;
  let auth: Record<string, string>;
  before(async () => {
    t = await startApi();
    const deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    auth = { authorization: `Bearer ${token}` };
    await markConnected(t.redis, deviceId);
  });
  after(async () => t.close());

  it('When /connect or /disconnect carries a body, then 400 "takes no request body", answered before the body arrives', async () => {
    const json = await call(`${t.api}/connect`, { token, json: {} });
    // 10 MB declared, 5 bytes sent: the answer must not wait for the rest.
    const declared = await rawRequest(
      t.url,
      [head('POST', '/api/messenger/v1/disconnect', { ...auth, 'content-length': 10_000_000 }), 'hello'],
      { waitMs: 15_000 },
    );
    const chunked = await rawRequest(
      t.url,
      [
        head('POST', '/api/messenger/v1/disconnect', { ...auth, 'transfer-encoding': 'chunked' }),
        '5\r\nhello\r\n',
      ],
      { waitMs: 15_000 },
    );

    expect(json.status).to.equal(400);
    expect(json.body).to.deep.equal(NO_BODY);
    for (const res of [declared, chunked]) {
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.equal(NO_BODY);
      // Cut off by its one second, not before, and not left open (-1 within the 15 s wait).
      // quiet: 1040 ms
      expect(res.closedMs, 'the unfinished body is cut off after a second').to.be.within(900, 11_000);
    }
    // Before the cut-off could have ended the wait for the body (at 1 s).
    expect(declared.answeredMs, 'answered without the 10 MB').to.be.lessThan(900); // quiet: 55 ms
  });

  it('When /connect comes with no body, an empty one or an empty chunked one, then the body check lets it through', async () => {
    const path = '/api/messenger/v1/connect?method=sms';
    const none = await call(`${t.url}${path}`, { token, method: 'POST' });
    const empty = await rawRequest(t.url, [head('POST', path, { ...auth, 'content-length': 0 })], {
      untilAnswered: true,
    });
    const emptyChunked = await rawRequest(
      t.url,
      [head('POST', path, { ...auth, 'transfer-encoding': 'chunked' }), '0\r\n\r\n'],
      { untilAnswered: true },
    );
    // The query check answers: the request got past the body check.
    expect(none.body).to.deep.equal(BAD_METHOD);
    expect(empty.body).to.deep.equal(BAD_METHOD);
    expect(emptyChunked.body).to.deep.equal(BAD_METHOD);
  });

  it('When an /otp body is over 4 KB, declared or streamed, then 413 with its own error', async () => {
    const big = JSON.stringify({ phone: '15551234567', code: '1234', language: 'x'.repeat(5000) });
    const declared = await call(`${t.api}/otp`, {
      token,
      body: big,
      headers: { 'content-type': 'application/json' },
    });
    const streamed = await rawRequest(
      t.url,
      [
        head('POST', '/api/messenger/v1/otp', {
          ...auth,
          'content-type': 'application/json',
          'transfer-encoding': 'chunked',
        }),
        `${Buffer.byteLength(big).toString(16)}\r\n${big}\r\n`,
        '0\r\n\r\n',
      ],
      { untilAnswered: true },
    );
    const expected = { success: false, error: 'Request body too large: /otp bodies are limited to 4 KB' };
    expect(declared.status).to.equal(413);
    expect(declared.body).to.deep.equal(expected);
    expect(streamed.status).to.equal(413);
    expect(streamed.body).to.deep.equal(expected);
  });

  it('When an /otp body is just under 4 KB, then it is read and validated as before', async () => {
    const body = JSON.stringify({ phone: '15551234567', code: '12a4', pad: 'x'.repeat(3900) });
    const res = await call(`${t.api}/otp`, { token, body, headers: { 'content-type': 'application/json' } });
    expect(res.status).to.equal(400);
    expect(res.body.details).to.deep.include({ path: ['pad'], message: 'pad is not allowed' });
  });

  it('When a body is gzip-compressed, then it is read as before; a compressed bomb is 413 at the limit', async () => {
    const zipped = gzipSync(JSON.stringify({ phone: '15551234567', code: '12a4' }));
    const bomb = gzipSync(
      JSON.stringify({ phone: '15551234567', code: '1234', language: '0'.repeat(3_000_000) }),
    );
    const headers = { 'content-type': 'application/json', 'content-encoding': 'gzip' };
    const ok = await call(`${t.api}/otp`, { token, body: zipped, headers });
    const exploded = await call(`${t.api}/otp`, { token, body: bomb, headers });
    const unknown = await call(`${t.api}/otp`, {
      token,
      body: zipped,
      headers: { ...headers, 'content-encoding': 'zip' },
    });

    expect(ok.body.details).to.deep.equal([
      { path: ['code'], message: 'code must be 4 to 8 digits (0-9 only)' },
    ]);
    expect(bomb.length, 'the bomb is small on the wire').to.be.lessThan(4096);
    expect(exploded.status).to.equal(413);
    expect(unknown.status).to.equal(400);
    expect(unknown.body.details).to.deep.equal([{ path: [], message: 'Unsupported Content-Encoding "zip"' }]);
  });

  it('When a small body comes with its headers, after them, or in pieces, then /send reads it the same; malformed is 400 either way', async () => {
    const json = JSON.stringify({ to: '15551234567', text: 'hello' });
    const headers = (length: number) =>
      head('POST', '/api/messenger/v1/send', {
        ...auth,
        'content-type': 'application/json',
        'content-length': length,
      });
    const url = t.api;
    const together = await rawRequest(url, [headers(json.length) + json], { untilAnswered: true });
    const after = await rawRequest(url, [headers(json.length), { pauseMs: 50 }, json], {
      untilAnswered: true,
    });
    const pieces = await rawRequest(
      url,
      [headers(json.length), json.slice(0, 10), { pauseMs: 30 }, json.slice(10)],
      { untilAnswered: true },
    );
    const malformed = await rawRequest(url, [headers(5), { pauseMs: 30 }, '{"to"'], { untilAnswered: true });
    for (const r of [together, after, pieces]) {
      expect(r.status).to.equal(202);
      expect((r.body as { messageId?: unknown }).messageId).to.be.a('string');
    }
    expect(malformed.status).to.equal(400);
    expect((malformed.body as { details?: unknown }).details).to.deep.equal([
      { path: [], message: 'Malformed JSON body' },
    ]);
  });

  it('When a client leaves after the headers of a small body, then nothing is accepted and the API stays well', async () => {
    const json = JSON.stringify({ to: '15551234567', text: 'never sent' });
    const left = await rawRequest(
      t.api,
      [
        head('POST', '/api/messenger/v1/send', {
          ...auth,
          'content-type': 'application/json',
          'content-length': json.length,
        }),
      ],
      { waitMs: 200 },
    );
    expect(left.status).to.equal(0);
    const next = await call(`${t.api}/send`, { token, json: { to: '15551234567', text: 'x' } });
    expect(next.status).to.equal(202);
  });

  it('When a body holds a huge list outside `to`, then 400 before it is parsed', async () => {
    const body = `{"to":"15551234567","text":"x","extra":[${'0,'.repeat(200_000)}0]}`;
    const res = await call(`${t.api}/send`, { token, body, headers: { 'content-type': 'application/json' } });
    expect(res.status).to.equal(400);
    expect(res.body.details).to.deep.equal([
      { path: [], message: `The JSON body holds more than ${t.config.maxRecipients + 64} values` },
    ]);
  });
});

const invalid = (message: string) => ({
  success: false,
  error: 'Invalid request data',
  details: [{ path: [], message }],
});

describe("API: errors Node's HTTP parser answers itself get the JSON envelope", () => {
  let t: TestApi;
  // With a valid token the request waits on Redis for it, so the parser meets the broken body
  // before any answer is written (without one, the 401 would be answered first).
  let auth = '';
  before(async () => {
    t = await startApi();
    auth = `Authorization: Bearer ${await createToken(t)}\r\n`;
  });
  after(async () => t.close());

  const cases: [string, (string | Buffer | (() => string))[], number, unknown][] = [
    ['an unknown method', ['BREW /healthz HTTP/1.1\r\nHost: x\r\n\r\n'], 400, invalid('Unknown HTTP method')],
    [
      'raw non-ASCII in the path',
      [Buffer.from('GET /api/messenger/v1/messages/\xe9t\xe9 HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1')],
      400,
      invalid('Malformed request target: the path must be ASCII without spaces (percent-encode the rest)'),
    ],
    [
      'a space in the path',
      ['GET /api/messenger/v1/messages/a b HTTP/1.1\r\nHost: x\r\n\r\n'],
      400,
      invalid('Malformed request line: a space in the path must be percent-encoded (%20)'),
    ],
    [
      'bad chunked encoding',
      [
        () =>
          `POST /api/messenger/v1/send HTTP/1.1\r\nHost: x\r\n${auth}Transfer-Encoding: chunked\r\n\r\nzz\r\n`,
      ],
      400,
      invalid('Malformed chunked body'),
    ],
    [
      'Content-Length with Transfer-Encoding',
      [
        'POST /api/messenger/v1/send HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n',
      ],
      400,
      invalid('Content-Length must not be sent together with Transfer-Encoding, nor twice'),
    ],
    [
      'a duplicate Content-Length',
      ['POST /api/messenger/v1/send HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n'],
      400,
      invalid('Content-Length must not be sent together with Transfer-Encoding, nor twice'),
    ],
    [
      'headers over 16 KB',
      [`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`],
      431,
      { success: false, error: 'Request header fields too large' },
    ],
  ];
  for (const [what, parts, status, body] of cases) {
    it(`When a request has ${what}, then ${status} JSON with a request id, and the connection closes`, async () => {
      const res = await rawRequest(
        t.url,
        parts.map((p) => (typeof p === 'function' ? p() : p)),
        { waitMs: 15_000 },
      );
      expect(res.status, res.raw.slice(0, 200)).to.equal(status);
      expect(res.body).to.deep.equal(body);
      expect(res.headers['content-type']).to.equal('application/json; charset=utf-8');
      expect(res.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/);
      // Closed, not kept alive (65 s): quiet: 100 ms.
      expect(res.closedMs, 'closed').to.be.within(0, 10_000);
      const logged = t.logs.find((l) => l.requestId === res.headers['x-request-id']);
      expect(logged).to.include({ message: 'request refused by the HTTP parser', status });
    });
  }

  it('When parser errors were answered, then they are counted like other requests', async () => {
    const text = await t.services.metrics.registry.getSingleMetricAsString('mgw_http_requests_total');
    expect(text).to.match(/route="unparsed",method="unknown",status="400"\} [1-9]/);
    expect(text).to.match(/route="unparsed",method="unknown",status="431"\} [1-9]/);
  });
});

describe('API: a known path with a method it does not serve', () => {
  let t: TestApi;
  let token: string;
  before(async () => {
    t = await startApi();
    token = await createToken(t);
  });
  after(async () => t.close());

  const cases: [string, string, string][] = [
    ['DELETE', '/send', 'POST'],
    ['GET', '/otp', 'POST'],
    ['PUT', '/connect', 'GET, POST'],
    ['GET', '/disconnect', 'POST'],
    ['POST', '/status', 'GET, HEAD'],
    ['PATCH', '/messages/abc', 'GET, HEAD'],
  ];
  for (const [method, path, allow] of cases) {
    it(`When ${method} ${path} is called with a token, then 405 with Allow: ${allow}; without one, 401`, async () => {
      const authed = await call(`${t.api}${path}`, { method, token });
      const anonymous = await call(`${t.api}${path}`, { method });
      expect(authed.status).to.equal(405);
      expect(authed.headers.get('allow')).to.equal(allow);
      expect(authed.body).to.deep.equal({ success: false, error: 'Method not allowed' });
      expect(anonymous.status).to.equal(401);
    });
  }
});
