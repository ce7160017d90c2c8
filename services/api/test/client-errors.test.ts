import { expect } from 'chai';
import { call, createToken, startApi, type TestApi } from './helpers/api.js';
import { rawRequest } from './helpers/raw-http.js';

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
        { waitMs: 3000 },
      );
      expect(res.status, res.raw.slice(0, 200)).to.equal(status);
      expect(res.body).to.deep.equal(body);
      expect(res.headers['content-type']).to.equal('application/json; charset=utf-8');
      expect(res.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/);
      expect(res.closedMs, 'closed').to.be.within(0, 2500);
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
