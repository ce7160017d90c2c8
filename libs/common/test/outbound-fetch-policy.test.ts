import { expect } from 'chai';
import {
  createOutboundClient,
  OutboundNetworkError,
  OutboundRefusedError,
  parseAllowedPrivateHosts,
  type OutboundClientOptions,
} from '../src/index.js';
import { ok, startHttpServer, tableResolver, type CountingServer } from './outbound-servers.js';

const LIMITS = { timeoutMs: 5000, maxBytes: 1_000_000 };

async function refusal(work: Promise<unknown>): Promise<OutboundRefusedError> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'expected a refusal').to.be.instanceOf(OutboundRefusedError);
  return err as OutboundRefusedError;
}

describe('outbound: address policy on real sockets', () => {
  let server: CountingServer;
  beforeEach(async () => {
    server = await startHttpServer(ok('from loopback'));
  });
  afterEach(() => server.close());

  // The port is allowed on purpose: the address alone must be what refuses these.
  const client = (extra: Partial<OutboundClientOptions> = {}) =>
    createOutboundClient({ ...LIMITS, allowedPorts: [server.port], ...extra });

  const notations = [
    '127.0.0.1',
    '2130706433',
    '0x7f000001',
    '017700000001',
    '127.1',
    '0x7f.1',
    '127.000.000.001',
    '%31%32%37.0.0.1',
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
    '[::127.0.0.1]',
    '[::1]',
    '0.0.0.0',
    '0',
    '[::]',
  ];
  for (const host of notations) {
    it(`When the host is written ${host}, then the request is refused and the server never sees a connection`, async () => {
      const url = `http://${host}:${server.port}/metrics?token=s3cr3t`;
      const err = await refusal(client().fetch(url));
      expect(err.reason).to.equal('private_address');
      expect(err.message).not.to.include('s3cr3t');
      expect(err.message).not.to.include('/metrics');
      expect((await refusal(client().check(url))).reason).to.equal('private_address');
      expect(server.connections).to.equal(0);
    });
  }

  for (const host of ['localhost', 'LocalHost']) {
    it(`When the host is ${host} (system resolver), then the request is refused and never connects`, async () => {
      const err = await refusal(client().fetch(`http://${host}:${server.port}/`));
      expect(err.reason).to.equal('private_address');
      expect(server.connections).to.equal(0);
    });
  }

  it('When a name resolves to a loopback and a public address, then the whole request is refused', async () => {
    // Loopback first: a client that vetted only some answers would connect there, and the count would show it.
    const lookup = tableResolver({ 'mixed.test': ['127.0.0.1', '8.8.8.8'] });
    const err = await refusal(client({ lookup }).fetch(`http://mixed.test:${server.port}/`));
    expect(err).to.include({ reason: 'private_address', host: 'mixed.test' });
    expect(server.connections).to.equal(0);
  });

  it('When one answer is allow-listed and another is not, then the whole request is refused', async () => {
    const other = await startHttpServer(ok(), '127.0.0.2', server.port);
    const lookup = tableResolver({ 'split.test': ['127.0.0.1', '127.0.0.2'] });
    try {
      const allowList = parseAllowedPrivateHosts('127.0.0.1');
      const err = await refusal(client({ lookup, allowList }).fetch(`http://split.test:${server.port}/`));
      expect(err.reason).to.equal('private_address');
      expect(server.connections + other.connections).to.equal(0);
    } finally {
      await other.close();
    }
  });

  it('When DNS answers differently on a second question, then it is asked once and the socket goes to the checked address', async () => {
    // A rebinding resolver: the first answer (allow-listed) passes, every later one points at another local server.
    const other = await startHttpServer(ok('rebound'), '127.0.0.2', server.port);
    let asked = 0;
    const lookup = tableResolver({ 'rebind.test': () => (++asked === 1 ? ['127.0.0.1'] : ['127.0.0.2']) });
    try {
      const res = await createOutboundClient({
        ...LIMITS,
        allowList: parseAllowedPrivateHosts('127.0.0.1'),
        lookup,
      }).fetch(`http://rebind.test:${server.port}/`);
      expect(res.body.toString()).to.equal('from loopback');
      expect(lookup.questions).to.deep.equal(['rebind.test']);
      expect(server.requests[0]?.headers.host).to.equal(`rebind.test:${server.port}`);
      expect(other.connections).to.equal(0);
    } finally {
      await other.close();
    }
  });

  it('When a name moves to another address between two requests, then the second does not reuse the first socket', async () => {
    // A pooled keep-alive socket would outlive the check that admitted it; each request must connect where it checked.
    const other = await startHttpServer(ok('second address'), '127.0.0.2', server.port);
    let asked = 0;
    const lookup = tableResolver({ 'moving.test': () => (++asked === 1 ? ['127.0.0.1'] : ['127.0.0.2']) });
    try {
      const moving = createOutboundClient({
        ...LIMITS,
        allowList: parseAllowedPrivateHosts('127.0.0.0/8'),
        lookup,
      });
      const first = await moving.fetch(`http://moving.test:${server.port}/`);
      const second = await moving.fetch(`http://moving.test:${server.port}/`);
      expect([first.body.toString(), second.body.toString()]).to.deep.equal([
        'from loopback',
        'second address',
      ]);
      expect([server.requests.length, other.requests.length]).to.deep.equal([1, 1]);
    } finally {
      await other.close();
    }
  });

  it('When a name resolves to a public address, then check() reports it without connecting anywhere', async () => {
    const lookup = tableResolver({ 'hooks.test': ['2606:4700::1111', '1.1.1.1'] });
    const checked = await createOutboundClient({ ...LIMITS, lookup }).check('https://hooks.test/cb?x=1');
    expect(checked).to.deep.equal({
      url: 'https://hooks.test/cb?x=1',
      addresses: ['2606:4700::1111', '1.1.1.1'],
    });
  });

  for (const [how, allowed] of [
    ['by name', 'media.test'],
    ['by IP', '127.0.0.1'],
    ['by CIDR', '127.0.0.0/8'],
  ] as const) {
    it(`When the host is allowed ${how}, then a private address on a random port is fetched`, async () => {
      const lookup = tableResolver({ 'media.test': ['127.0.0.1'] });
      const res = await createOutboundClient({
        ...LIMITS,
        allowList: parseAllowedPrivateHosts(allowed),
        lookup,
      }).fetch(`http://media.test:${server.port}/file.jpg?sig=abc`);
      expect(res).to.include({ status: 200, url: `http://media.test:${server.port}/file.jpg?sig=abc` });
      expect(res.body.toString()).to.equal('from loopback');
      expect(server.requests.map((r) => r.url)).to.deep.equal(['/file.jpg?sig=abc']);
    });
  }

  it('When ::1 is allowed, then an IPv6 literal URL is fetched with a bracketed Host header', async () => {
    const v6 = await startHttpServer(ok('v6'), '::1');
    try {
      const res = await createOutboundClient({ ...LIMITS, allowList: parseAllowedPrivateHosts('::1') }).fetch(
        `http://[::1]:${v6.port}/`,
      );
      expect(res.body.toString()).to.equal('v6');
      expect(v6.requests[0]?.headers.host).to.equal(`[::1]:${v6.port}`);
    } finally {
      await v6.close();
    }
  });

  it('When only some private range is allowed, then another private address is still refused', async () => {
    const lookup = tableResolver({ 'media.test': ['127.0.0.1'] });
    const allowList = parseAllowedPrivateHosts('10.0.0.0/8, other.test');
    const err = await refusal(
      createOutboundClient({ ...LIMITS, allowList, lookup }).fetch(`http://media.test/`),
    );
    expect(err.reason).to.equal('private_address');
    expect(server.connections).to.equal(0);
  });

  it('When a public host uses a port outside the policy, then it is refused before connecting', async () => {
    const lookup = tableResolver({ 'public.test': ['8.8.8.8'] });
    const strict = createOutboundClient({ ...LIMITS, lookup });
    expect((await refusal(strict.check('http://public.test:8080/'))).reason).to.equal('port_not_allowed');
    expect((await refusal(strict.fetch('https://public.test:8443/'))).reason).to.equal('port_not_allowed');
    expect((await strict.check('https://public.test/')).addresses).to.deep.equal(['8.8.8.8']);
    expect((await strict.check('http://public.test:80/')).url).to.equal('http://public.test/');
    const widened = createOutboundClient({ ...LIMITS, lookup, allowedPorts: [8080] });
    expect((await widened.check('http://public.test:8080/')).addresses).to.deep.equal(['8.8.8.8']);
    expect((await refusal(widened.check('http://public.test/'))).reason).to.equal('port_not_allowed');
  });

  it('When the scheme is not http or https, then it is refused', async () => {
    for (const url of [
      'ftp://example.test/',
      'file:///etc/passwd',
      'data:text/plain,hi',
      'gopher://x.test/',
      'ws://x.test/',
    ]) {
      expect((await refusal(client().fetch(url))).reason, url).to.equal('scheme_not_allowed');
    }
  });

  it('When the URL is malformed or carries credentials, then it is refused as invalid without echoing it', async () => {
    for (const url of ['not a url', '/relative/path', 'http://', 'http://[::1/']) {
      const err = await refusal(client().fetch(url));
      expect(err.reason, url).to.equal('invalid_url');
      expect(err.host).to.equal(undefined);
    }
    const err = await refusal(client().fetch('http://user:pa55word@example.test/'));
    expect(err.reason).to.equal('invalid_url');
    expect(err.message).not.to.include('pa55word');
  });

  it('When the name does not resolve or resolves to garbage, then it is refused as unresolvable', async () => {
    const lookup = tableResolver({ 'empty.test': [], 'garbage.test': ['not-an-ip'] });
    for (const host of ['missing.test', 'empty.test', 'garbage.test']) {
      const err = await refusal(createOutboundClient({ ...LIMITS, lookup }).fetch(`https://${host}/`));
      expect(err, host).to.include({ reason: 'unresolvable', host });
    }
  });

  it('When an allowed host refuses the connection, then a network error names the host only', async () => {
    const closedPort = server.port;
    await server.close();
    const err = await createOutboundClient({ ...LIMITS, allowList: parseAllowedPrivateHosts('127.0.0.1') })
      .fetch(`http://127.0.0.1:${closedPort}/x?token=s3cr3t`)
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OutboundNetworkError);
    expect(err).to.include({ reason: 'network', code: 'ECONNREFUSED', host: '127.0.0.1' });
    expect((err as Error).message).not.to.include('s3cr3t');
    server = await startHttpServer(ok());
  });
});
