import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import type { TLSSocket } from 'node:tls';
import { expect } from 'chai';
import { createTlsMaterial } from '@mgw/messenger-sim';
import {
  createOutboundClient,
  OutboundRefusedError,
  parseAllowedPrivateHosts,
  type HostResolver,
} from '@mgw/common';
import { parseProxyUrl } from '@mgw/store';
import { startMicrosocks, startTinyproxy, type ProxyServerHandle } from '@mgw/testing';
import { createProxyAgent, proxyErrorKind } from '../src/index.js';

/** Answers `media.test` with 127.0.0.1 and counts the questions. */
const resolver: HostResolver = async (host) => {
  if (host !== 'media.test') throw Object.assign(new Error(`${host} not found`), { code: 'ENOTFOUND' });
  return [{ address: '127.0.0.1', family: 4 }];
};

function listen(server: http.Server | https.Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)),
  );
}

/**
 * How the proxy and the outbound (SSRF) guard meet, with real proxies: the guard vets the target,
 * then the device's proxy is asked for the vetted address; the proxy's host is not the guard's.
 */
describe('outbound client through a device proxy (real tinyproxy and microsocks)', function () {
  this.timeout(30_000);
  const tls = createTlsMaterial(['media.test']);
  const creds = { user: 'carol', pass: 'outbound-pw' };
  let tiny: ProxyServerHandle;
  let socks: ProxyServerHandle;
  let secure: https.Server;
  let plain: http.Server;
  let securePort: number;
  let plainPort: number;
  const servernames: (string | false | null)[] = [];

  before(async () => {
    tiny = await startTinyproxy(creds);
    socks = await startMicrosocks(creds);
    secure = https.createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
      servernames.push((req.socket as TLSSocket).servername);
      res.end(`secure ${req.headers.host}`);
    });
    plain = http.createServer((req, res) => res.end(`plain ${req.headers.host}`));
    securePort = await listen(secure);
    plainPort = await listen(plain);
  });
  after(async () => {
    await tiny?.stop();
    await socks?.stop();
    secure?.close();
    plain?.close();
  });

  const client = (allow: boolean) =>
    createOutboundClient({
      timeoutMs: 5000,
      maxBytes: 10_000,
      lookup: resolver,
      ca: tls.caPem,
      ...(allow ? { allowList: parseAllowedPrivateHosts('127.0.0.1') } : {}),
    });

  it('When a vetted https target is fetched through tinyproxy, then the proxy is asked for the vetted address and TLS still verifies the name', async () => {
    const via = createProxyAgent(parseProxyUrl(tiny.url()), { ca: tls.caPem });
    const res = await client(true).fetch(`https://media.test:${securePort}/x`, { via: via.agent });
    expect(res.status).to.equal(200);
    expect(res.body.toString()).to.equal(`secure media.test:${securePort}`);
    expect(servernames.at(-1)).to.equal('media.test');
    expect(await tiny.targets()).to.deep.equal([`127.0.0.1:${securePort}`]);
  });

  it('When a vetted http target is fetched through microsocks, then it goes through the proxy with the Host of the URL', async () => {
    const via = createProxyAgent(parseProxyUrl(socks.url()));
    const res = await client(true).fetch(`http://media.test:${plainPort}/y`, { via: via.agent });
    expect(res.body.toString()).to.equal(`plain media.test:${plainPort}`);
    expect(await socks.targets()).to.deep.equal([`127.0.0.1:${plainPort}`]);
  });

  it('When the guard refuses the target, then nothing reaches the proxy: a proxy never widens what may be fetched', async () => {
    const via = createProxyAgent(parseProxyUrl(tiny.url()));
    const before = (await tiny.targets()).length;
    const err = await client(false)
      .fetch(`http://media.test:${plainPort}/`, { via: via.agent })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OutboundRefusedError);
    expect((await tiny.targets()).length).to.equal(before);
  });

  it('When the credentials are wrong, then the failure is remembered as auth without the password in it', async () => {
    const via = createProxyAgent(parseProxyUrl(socks.url({ user: 'carol', pass: 'wrong-pw' })));
    const err = await client(true)
      .fetch(`http://media.test:${plainPort}/`, { via: via.agent })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(Error);
    const failure = via.takeFailure();
    expect(failure?.kind).to.equal('auth');
    expect(JSON.stringify(failure)).not.to.include('wrong-pw');
    expect(proxyErrorKind(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).to.equal('unreachable');
  });
});
