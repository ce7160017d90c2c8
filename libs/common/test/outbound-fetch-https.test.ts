import { expect } from 'chai';
import type { TLSSocket } from 'node:tls';
import { createTlsMaterial } from '@mgw/messenger-sim';
import { createOutboundClient, OutboundNetworkError, parseAllowedPrivateHosts } from '../src/index.js';
import { startHttpsServer, tableResolver, type CountingServer } from './outbound-servers.js';

describe('outbound: https with a private CA', () => {
  // The leaf names media.test only: verification succeeds only if it uses the URL's host, not the pinned address.
  const tls = createTlsMaterial(['media.test']);
  const servernames: (string | false | null)[] = [];
  let server: CountingServer;
  before(async () => {
    server = await startHttpsServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
      servernames.push((req.socket as TLSSocket).servername);
      res.writeHead(200).end('secure');
    });
  });
  after(() => server.close());
  beforeEach(() => {
    servernames.length = 0;
  });

  const lookup = tableResolver({ 'media.test': ['127.0.0.1'], 'other.test': ['127.0.0.1'] });
  const client = (ca?: string) =>
    createOutboundClient({
      timeoutMs: 3000,
      maxBytes: 1000,
      allowList: parseAllowedPrivateHosts('127.0.0.1'),
      lookup,
      ca,
    });

  it('When the caller trusts the CA, then the host name is sent as SNI and verified while the socket goes to the checked address', async () => {
    const res = await client(tls.caPem).fetch(`https://media.test:${server.port}/file`);
    expect(res).to.include({ status: 200, url: `https://media.test:${server.port}/file` });
    expect(res.body.toString()).to.equal('secure');
    expect(servernames).to.deep.equal(['media.test']);
    expect(lookup.questions.at(-1)).to.equal('media.test');
  });

  it('When the CA is not given, then the self-signed chain is rejected as a network error', async () => {
    const err = await client()
      .fetch(`https://media.test:${server.port}/`)
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OutboundNetworkError);
    expect((err as OutboundNetworkError).code).to.match(/CERT|SELF_SIGNED|UNABLE_TO_VERIFY/);
    expect(servernames).to.deep.equal([]);
  });

  it('When the URL names a host the certificate does not cover, then verification fails although the CA is trusted', async () => {
    for (const url of [`https://other.test:${server.port}/`, `https://127.0.0.1:${server.port}/`]) {
      const err = await client(tls.caPem)
        .fetch(url)
        .catch((e: unknown) => e);
      expect(err, url).to.be.instanceOf(OutboundNetworkError);
      expect((err as OutboundNetworkError).code, url).to.equal('ERR_TLS_CERT_ALTNAME_INVALID');
    }
    expect(servernames).to.deep.equal([]);
  });
});
