import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { parseAllowedPrivateHosts } from '@mgw/common';
import { SANDBOX_NUMBER, startCloudSim, type CloudSimHandle } from '@mgw/cloud-sim';
import { GraphClient, type GraphNumber } from './graph-client.js';
import { GraphError, GraphUnreachableError, MediaTooLargeError } from './graph-errors.js';

/** The simulator's sandbox number (its own credentials, no real account's). */
const NUMBER = SANDBOX_NUMBER;
const number: GraphNumber = {
  phoneNumberId: NUMBER.id,
  wabaId: NUMBER.wabaId,
  accessToken: NUMBER.accessToken,
  graphVersion: 'v21.0',
};
const loopback = parseAllowedPrivateHosts('127.0.0.1');

describe('GraphClient.downloadMedia against the Cloud API simulator', () => {
  let sim: CloudSimHandle;
  let graph: GraphClient;

  before(async () => {
    sim = await startCloudSim({ numbers: [{ ...NUMBER }] });
    graph = new GraphClient({ baseUrl: sim.url, allowList: loopback });
  });
  after(() => sim.close());

  it('When a contact sent an image, then its id downloads the exact bytes with the type Meta names', async () => {
    const { files } = sim.deliverForm(NUMBER.id, 'message.image');
    const file = await graph.downloadMedia(number, files[0]!.id, 1024 * 1024);
    expect(file.bytes.equals(files[0]!.bytes)).to.equal(true);
    expect(file.mimeType).to.equal('image/jpeg');
  });

  it('When the file is over the bound, then it is refused before it downloads', async () => {
    const { files } = sim.deliverForm(NUMBER.id, 'message.document');
    const err = await graph.downloadMedia(number, files[0]!.id, 16).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(MediaTooLargeError);
  });

  it('When the id is no media of the number (or no id at all), then the Graph error says so', async () => {
    const unknown = await graph.downloadMedia(number, '123456789', 1024).catch((e: unknown) => e);
    expect(unknown).to.be.instanceOf(GraphError);
    expect((unknown as GraphError).code).to.equal(100);
    const malformed = await graph.downloadMedia(number, '../me', 1024).catch((e: unknown) => e);
    expect(malformed).to.be.instanceOf(GraphError);
  });

  it('When Meta names a media URL on another host, then the token is not sent there', async () => {
    const { files } = sim.deliverForm(NUMBER.id, 'message.image');
    sim.sim.mediaOrigin = 'https://media.example.com';
    try {
      const err = await graph.downloadMedia(number, files[0]!.id, 1024 * 1024).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(GraphError);
      expect((err as Error).message).to.match(/not Meta’s media host/);
    } finally {
      sim.sim.mediaOrigin = undefined;
    }
  });
});

/**
 * A Graph API that misbehaves (the simulator never does): its media URL redirects, serves bytes
 * that do not hash to the sha256 it named, or more bytes than it announced. The client must follow
 * no redirect with the token, and refuse such a file.
 */
describe('GraphClient.downloadMedia against a misbehaving media host', () => {
  const BYTES = Buffer.from('the real file');
  const sha = createHash('sha256').update(BYTES).digest('hex');
  let server: http.Server;
  let thief: http.Server;
  let base = '';
  let stolen: string[] = [];
  let file: (res: http.ServerResponse) => void = () => undefined;
  let meta: Record<string, unknown> = {};

  const listen = async (s: http.Server) => {
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  };
  before(async () => {
    thief = http.createServer((req, res) => {
      stolen.push(String(req.headers.authorization));
      res.end('x');
    });
    const thiefUrl = await listen(thief);
    server = http.createServer((req, res) => {
      if (req.url?.startsWith('/v21.0/42')) {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ id: '42', url: `${base}/file`, mime_type: 'image/png', ...meta }));
      } else if (req.url === '/file') file(res);
      else if (req.url === '/redirect') res.writeHead(302, { location: `${thiefUrl}/steal` }).end();
      else res.writeHead(404).end();
    });
    base = await listen(server);
  });
  beforeEach(() => {
    stolen = [];
    meta = { sha256: sha };
    file = (res) => res.end(BYTES);
  });
  after(async () => {
    server.closeAllConnections();
    thief.closeAllConnections();
    await new Promise((r) => server.close(r));
    await new Promise((r) => thief.close(r));
  });
  const download = (named?: Record<string, unknown>, max = 1024) => {
    if (named) meta = named;
    return new GraphClient({ baseUrl: base, allowList: loopback }).downloadMedia(number, '42', max);
  };

  it('When the file is what Meta named, then it comes back', async () => {
    expect((await download()).bytes.equals(BYTES)).to.equal(true);
    meta = { sha256: createHash('sha256').update(BYTES).digest('base64') };
    expect((await download()).mimeType, 'a base64 sha256 (older payloads)').to.equal('image/png');
  });

  it('When Meta names a type no header can carry, then the file is octet-stream', async () => {
    for (const mime_type of ['image/png\r\nset-cookie: a=b', '<script>', '', 42])
      expect((await download({ ...meta, mime_type } as never)).mimeType).to.equal('application/octet-stream');
    expect((await download({ ...meta, mime_type: 'audio/ogg; codecs=opus' } as never)).mimeType).to.equal(
      'audio/ogg; codecs=opus',
    );
  });

  it('When the media URL redirects, then the redirect is not followed and the token goes nowhere else', async () => {
    meta = { url: `${base}/redirect` };
    const err = await download().catch((e: unknown) => e);
    expect(err).to.be.instanceOf(GraphUnreachableError);
    expect(stolen).to.deep.equal([]);
  });

  it('When the bytes do not hash to the sha256 Meta named, then the file is refused', async () => {
    file = (res) => res.end(Buffer.from('another file'));
    const err = await download().catch((e: unknown) => e);
    expect(err).to.be.instanceOf(GraphError);
    expect((err as Error).message).to.match(/SHA-256/);
  });

  it('When more bytes come than the bound, whatever size was announced, then the download stops', async () => {
    meta = { file_size: 10 };
    file = (res) => res.end(Buffer.alloc(4096));
    expect(await download(undefined, 1024).catch((e: unknown) => e)).to.be.instanceOf(MediaTooLargeError);
  });
});
