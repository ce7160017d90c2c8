import { expect } from 'chai';
import type http from 'node:http';
import { createOutboundClient, OutboundRefusedError, parseAllowedPrivateHosts } from '../src/index.js';
import { ok, startHttpServer, tableResolver, type CountingServer } from './outbound-servers.js';

const LIMITS = { timeoutMs: 5000, maxBytes: 1_000_000 };

const redirectTo =
  (location: (req: http.IncomingMessage) => string, status = 302): http.RequestListener =>
  (req, res) => {
    res.writeHead(status, { location: location(req) }).end('moved');
  };

describe('outbound: redirects', () => {
  const servers: CountingServer[] = [];
  const start = async (handler: http.RequestListener, host?: string, port?: number) => {
    const server = await startHttpServer(handler, host, port);
    servers.push(server);
    return server;
  };
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  // media.test is allowed by name only, so an address it redirects to gets no favour from its entry.
  const lookup = tableResolver({
    'media.test': ['127.0.0.1'],
    'public.test': ['8.8.8.8'],
    'b.test': ['127.0.0.1'],
    localhost: ['127.0.0.1', '::1'],
  });
  const client = (allowed = 'media.test', maxRedirects?: number) =>
    createOutboundClient({ ...LIMITS, lookup, allowList: parseAllowedPrivateHosts(allowed), maxRedirects });

  const refusedTargets: [string, (port: number) => string, string][] = [
    ['a decimal loopback', (port) => `http://2130706433:${port}/metrics`, 'private_address'],
    ['localhost', (port) => `http://localhost:${port}/metrics`, 'private_address'],
    ['an IPv6-mapped loopback', (port) => `http://[::ffff:127.0.0.1]:${port}/`, 'private_address'],
    ['a public host on a closed port', () => 'http://public.test:6379/', 'port_not_allowed'],
    ['a file URL', () => 'file:///etc/passwd', 'scheme_not_allowed'],
  ];
  for (const [what, location, reason] of refusedTargets) {
    it(`When an allowed host redirects to ${what}, then it is refused and the target is never contacted`, async () => {
      const target = await start(ok('secret metrics'));
      const origin = await start(redirectTo(() => location(target.port)));
      const err = await client()
        .fetch(`http://media.test:${origin.port}/start`)
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(OutboundRefusedError);
      expect(err).to.include({ reason });
      expect(origin.requests).to.have.length(1);
      expect(target.connections).to.equal(0);
    });
  }

  it('When an address-allowed host redirects to a private address outside the entry, then it is refused', async () => {
    const origin = await start(redirectTo(() => 'http://127.0.0.2:' + String(origin.port) + '/'));
    const target = await start(ok(), '127.0.0.2', origin.port);
    const err = await client('127.0.0.1/32')
      .fetch(`http://127.0.0.1:${origin.port}/`)
      .catch((e: unknown) => e);
    expect(err).to.include({ reason: 'private_address', host: '127.0.0.2' });
    expect(target.connections).to.equal(0);
  });

  it('When redirects stay within the limit, then the final answer and URL are returned', async () => {
    const server = await start((req, res) => {
      const n = Number(new URL(req.url ?? '', 'http://x').pathname.split('/')[2]);
      if (n < 3) res.writeHead(301, { location: `/hop/${n + 1}?q=${n}` }).end();
      else res.writeHead(200).end(`arrived after ${n}`);
    });
    const res = await client().fetch(`http://media.test:${server.port}/hop/0`);
    expect(res).to.include({ status: 200, url: `http://media.test:${server.port}/hop/3?q=2` });
    expect(res.body.toString()).to.equal('arrived after 3');
  });

  it('When redirects exceed the limit, then the client stops with too_many_redirects', async () => {
    const server = await start(redirectTo((req) => `/hop/${Number(req.url?.split('/')[2]) + 1}`));
    const err = await client('media.test', 2)
      .fetch(`http://media.test:${server.port}/hop/0`)
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OutboundRefusedError);
    expect(err).to.include({ reason: 'too_many_redirects', host: 'media.test' });
    expect(server.requests.map((r) => r.url)).to.deep.equal(['/hop/0', '/hop/1', '/hop/2']);
  });

  it('When redirects are disabled, then the first redirect is an error', async () => {
    const server = await start(redirectTo(() => '/elsewhere'));
    const err = await client('media.test', 0)
      .fetch(`http://media.test:${server.port}/`)
      .catch((e: unknown) => e);
    expect(err).to.include({ reason: 'too_many_redirects' });
    expect(server.requests).to.have.length(1);
  });

  it('When a 3xx has no Location, then it is returned as an ordinary response', async () => {
    const server = await start((_req, res) => res.writeHead(304).end());
    const res = await client().fetch(`http://media.test:${server.port}/`);
    expect(res.status).to.equal(304);
  });

  it('When a POST is answered with 303, then the next hop is a GET without the body', async () => {
    const bodies: string[] = [];
    const server = await start(async (req, res) => {
      let body = '';
      for await (const chunk of req) body += String(chunk);
      bodies.push(body);
      if (req.url === '/submit') res.writeHead(303, { location: '/result' }).end();
      else res.writeHead(200).end('done');
    });
    const res = await client().fetch(`http://media.test:${server.port}/submit`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"a":1}',
    });
    expect(res.status).to.equal(200);
    expect(server.requests.map((r) => [r.method, r.url])).to.deep.equal([
      ['POST', '/submit'],
      ['GET', '/result'],
    ]);
    expect(bodies).to.deep.equal(['{"a":1}', '']);
    expect(server.requests[1]?.headers['content-type']).to.equal(undefined);
  });

  it('When a 307 redirects a POST, then method and body are kept', async () => {
    const bodies: string[] = [];
    const server = await start(async (req, res) => {
      let body = '';
      for await (const chunk of req) body += String(chunk);
      bodies.push(body);
      if (req.url === '/a') res.writeHead(307, { location: '/b' }).end();
      else res.writeHead(201).end();
    });
    const res = await client().fetch(`http://media.test:${server.port}/a`, {
      method: 'POST',
      body: 'payload',
    });
    expect(res.status).to.equal(201);
    expect(server.requests.map((r) => r.method)).to.deep.equal(['POST', 'POST']);
    expect(bodies).to.deep.equal(['payload', 'payload']);
  });

  it('When a redirect changes origin, then Authorization and Cookie are not forwarded', async () => {
    const server = await start((req, res) => {
      if (req.headers.host?.startsWith('media.test')) {
        res.writeHead(302, { location: `http://b.test:${(req.socket.localPort ?? 0).toString()}/` }).end();
      } else res.writeHead(200).end();
    });
    await client('media.test,b.test').fetch(`http://media.test:${server.port}/`, {
      headers: { Authorization: 'Bearer t0ken', Cookie: 'sid=1', 'X-Trace': 'kept' },
    });
    const [first, second] = server.requests;
    expect(first?.headers).to.include({ authorization: 'Bearer t0ken', cookie: 'sid=1' });
    expect(second?.headers.host).to.equal(`b.test:${server.port}`);
    expect(second?.headers).not.to.have.any.keys('authorization', 'cookie');
    expect(second?.headers['x-trace']).to.equal('kept');
  });
});
