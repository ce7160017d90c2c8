import { expect } from 'chai';
import type http from 'node:http';
import type net from 'node:net';
import {
  createOutboundClient,
  OutboundNetworkError,
  OutboundTimeoutError,
  OutboundTooLargeError,
  parseAllowedPrivateHosts,
  type OutboundClientOptions,
} from '../../src/index.js';
import { startHttpServer, startRawServer, type CountingServer } from '../outbound-servers.js';

const CAP = 1000;

describe('outbound: size and time limits', () => {
  const servers: CountingServer[] = [];
  const timers: NodeJS.Timeout[] = [];
  afterEach(async () => {
    for (const t of timers.splice(0)) clearTimeout(t);
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  const http_ = async (handler: http.RequestListener) => {
    const s = await startHttpServer(handler);
    servers.push(s);
    return s;
  };
  const raw = async (onConnection: (socket: net.Socket) => void) => {
    const s = await startRawServer(onConnection);
    servers.push(s);
    return s;
  };
  const client = (extra: Partial<OutboundClientOptions> = {}) =>
    createOutboundClient({
      timeoutMs: 3000,
      maxBytes: CAP,
      allowList: parseAllowedPrivateHosts('127.0.0.1'),
      ...extra,
    });
  const failure = (work: Promise<unknown>) =>
    work.then(
      () => undefined,
      (e: unknown) => e,
    );

  it('When the body is exactly at the cap, with or without Content-Length, then it is returned whole', async () => {
    const sized = await http_((_req, res) =>
      res.writeHead(200, { 'content-length': CAP }).end('x'.repeat(CAP)),
    );
    const chunked = await http_((_req, res) => {
      res.write('y'.repeat(CAP / 2));
      res.end('y'.repeat(CAP / 2));
    });
    expect((await client().fetch(`http://127.0.0.1:${sized.port}/`)).body.length).to.equal(CAP);
    expect((await client().fetch(`http://127.0.0.1:${chunked.port}/`)).body.toString()).to.equal(
      'y'.repeat(CAP),
    );
  });

  it('When Content-Length announces more than the cap, then the client gives up before any body arrives', async () => {
    // Headers only: the body would never come, so only the early refusal can end this before the timeout.
    const server = await http_((_req, res) => {
      res.writeHead(200, { 'content-length': 50_000_000 });
      res.flushHeaders();
    });
    const err = await failure(client().fetch(`http://127.0.0.1:${server.port}/`));
    // Its kind is the proof, not a clock: the budget running out would be an OutboundTimeoutError.
    expect(err).to.be.instanceOf(OutboundTooLargeError);
    expect(err).to.include({ reason: 'too_large', maxBytes: CAP, host: '127.0.0.1' });
  });

  it('When a chunked body grows past the cap, then reading stops with too_large', async () => {
    let written = 0;
    const server = await http_((_req, res) => {
      const timer = setInterval(() => {
        written += 400;
        res.write('z'.repeat(400));
      }, 5);
      timers.push(timer);
    });
    const err = await failure(client().fetch(`http://127.0.0.1:${server.port}/`));
    expect(err).to.be.instanceOf(OutboundTooLargeError);
    expect(written).to.be.below(CAP * 20);
  });

  it('When a close-delimited body has no Content-Length, then the cap still applies', async () => {
    const server = await raw((socket) => {
      socket.end(`HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n${'b'.repeat(200_000)}`);
    });
    expect(await failure(client().fetch(`http://127.0.0.1:${server.port}/`))).to.be.instanceOf(
      OutboundTooLargeError,
    );
  });

  it('When Content-Length understates a body sent in one go, then the response is rejected as a protocol error', async () => {
    const server = await raw((socket) => {
      socket.end(`HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n${'c'.repeat(200_000)}`);
    });
    const err = await failure(client().fetch(`http://127.0.0.1:${server.port}/`));
    expect(err).to.be.instanceOf(OutboundNetworkError);
    expect((err as OutboundNetworkError).code).to.match(/^HPE_/);
  });

  it('When Content-Length understates a body whose excess comes later, then only the declared bytes are taken', async () => {
    const server = await raw((socket) => {
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n${'c'.repeat(10)}`);
      timers.push(setTimeout(() => socket.end('c'.repeat(200_000)), 100));
    });
    const res = await client().fetch(`http://127.0.0.1:${server.port}/`);
    expect(res.body.toString()).to.equal('c'.repeat(10));
  });

  it('When a request sets its own cap, then it overrides the client default', async () => {
    const server = await http_((_req, res) => res.end('d'.repeat(600)));
    const url = `http://127.0.0.1:${server.port}/`;
    expect(await failure(client().fetch(url, { maxBytes: 500 }))).to.be.instanceOf(OutboundTooLargeError);
    expect((await client({ maxBytes: 100 }).fetch(url, { maxBytes: 700 })).body.length).to.equal(600);
  });

  it('When the server accepts but never answers, then the request times out on budget', async () => {
    const server = await raw(() => undefined);
    const started = Date.now();
    const err = await failure(
      client({ timeoutMs: 300 }).fetch(`http://127.0.0.1:${server.port}/?token=s3cr3t`),
    );
    expect(err).to.be.instanceOf(OutboundTimeoutError);
    expect(err).to.include({ reason: 'timeout', timeoutMs: 300, host: '127.0.0.1' });
    expect((err as Error).message).not.to.include('s3cr3t');
    // The 300 ms budget ended it (not before), and not mocha's 20 s timeout: quiet: 310 ms.
    expect(Date.now() - started).to.be.within(250, 3100);
    expect(server.connections).to.equal(1);
  });

  it('When the server drips the body below the cap, then the overall budget still ends it', async () => {
    const server = await http_((_req, res) => {
      res.writeHead(200);
      timers.push(setInterval(() => res.write('.'), 20));
    });
    const started = Date.now();
    const err = await failure(client({ timeoutMs: 400 }).fetch(`http://127.0.0.1:${server.port}/`));
    expect(err).to.be.instanceOf(OutboundTimeoutError);
    // The 400 ms budget ended it though bytes kept coming, not mocha's 20 s timeout: quiet: 400 ms.
    expect(Date.now() - started).to.be.within(350, 4000);
  });

  it('When each redirect hop is quick but the chain is long, then the budget covers the whole chain', async () => {
    const server = await http_((req, res) => {
      setTimeout(() => res.writeHead(302, { location: `${req.url ?? ''}x` }).end(), 120);
    });
    const err = await failure(
      client({ timeoutMs: 300, maxRedirects: 10 }).fetch(`http://127.0.0.1:${server.port}/`),
    );
    expect(err).to.be.instanceOf(OutboundTimeoutError);
    // A budget per hop would follow all ten redirects (11 requests); the chain's budget stops it
    // after two or three hops — or one, on a machine so busy that a hop takes the whole budget.
    expect(server.requests.length).to.be.within(1, 4);
  });

  it('When the resolver never answers, then the request times out without connecting', async () => {
    const lookup = () => new Promise<never>(() => undefined);
    const err = await failure(client({ timeoutMs: 200, lookup }).fetch('https://slow-dns.test/'));
    expect(err).to.be.instanceOf(OutboundTimeoutError);
    expect(err).to.include({ host: 'slow-dns.test' });
  });
});
