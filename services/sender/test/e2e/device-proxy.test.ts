import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Cluster, Redis } from 'ioredis';
import {
  freePort,
  startMicrosocks,
  startTinyproxy,
  useStack,
  waitFor,
  type ProxyServerHandle,
  type Stack,
} from '@mgw/testing';

const ADMIN_TOKEN = 'proxy-e2e-admin-token-0123456789abcdef';
const HTTP_CREDS = { user: 'alice', pass: 'tiny-S3cret-pw' };
const SOCKS_CREDS = { user: 'bob', pass: 'socks-S3cret-pw' };
const SECRETS = [HTTP_CREDS.pass, SOCKS_CREDS.pass, 'wrong-pass-xyz'];

const admin = (s: Stack, method: string, p: string, body?: unknown) =>
  s.adminApi(ADMIN_TOKEN, method, p, body);

/** Every value in the stack's Redis database, as text (strings, hashes, lists, sets, streams). */
async function everyValue(redis: Redis | Cluster): Promise<string> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'COUNT', 500);
    cursor = next;
    for (const key of found) {
      const type = await redis.type(key);
      out.push(key);
      if (type === 'string') out.push((await redis.getBuffer(key))?.toString('latin1') ?? '');
      else if (type === 'hash') out.push(JSON.stringify(await redis.hgetall(key)));
      else if (type === 'list') out.push(JSON.stringify(await redis.lrange(key, 0, -1)));
      else if (type === 'set') out.push(JSON.stringify(await redis.smembers(key)));
      else if (type === 'zset') out.push(JSON.stringify(await redis.zrange(key, 0, -1)));
      else if (type === 'stream') out.push(JSON.stringify(await redis.xrange(key, '-', '+')));
    }
  } while (cursor !== '0');
  return out.join('\n');
}

async function senderMetrics(s: Stack): Promise<string> {
  const texts = await Promise.all(
    s.senders().map(async (p) => (await fetch(`http://127.0.0.1:${p.metricsPort}/metrics`)).text()),
  );
  return texts.join('\n');
}

describe('e2e: a proxy per device (real services, simulator, real tinyproxy and microsocks)', function () {
  this.timeout(240_000);
  // 127.0.0.1 is allowed for the page and attachment this test serves (the guard still vets it).
  const stack = useStack({ env: { ADMIN_API_TOKEN: ADMIN_TOKEN, ALLOWED_PRIVATE_HOSTS: '127.0.0.1' } });
  let web: Server;
  let webPort: number;
  const webHits: string[] = [];
  let tiny: ProxyServerHandle;
  let socks: ProxyServerHandle;
  let tokenB: string;
  const deviceB = 'proxy-device-b';
  /** `127.0.0.1:<port>` of the simulator's WebSocket: what a device's proxy connects to. */
  let wsTarget: string;

  before(async () => {
    web = createServer((req, res) => {
      webHits.push(req.url ?? '');
      if (req.url === '/doc.txt') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('a document fetched through the proxy');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><head><meta property="og:title" content="Proxied page"></head></html>');
    });
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    webPort = (web.address() as AddressInfo).port;
    tiny = await startTinyproxy(HTTP_CREDS);
    socks = await startMicrosocks(SOCKS_CREDS);
    const s = stack();
    wsTarget = new URL(s.simulator.info.wsUrl).host;
    await s.linkByQr('15550910001', 'Proxy A');
    tokenB = await s.createToken(deviceB);
    await s.linkByQr('15550910002', 'Proxy B', tokenB);
  });
  after(async () => {
    web?.close();
    await tiny?.stop();
    await socks?.stop();
  });

  it('When a proxy URL is bad, then the PUT is a 400 naming `url` that never echoes the URL', async () => {
    const s = stack();
    for (const url of [
      'ftp://u:p@127.0.0.1:21',
      'http://u:hidden-pw@127.0.0.1',
      'socks5://u:hidden-pw@127.0.0.1:1080/path',
      'https://127.0.0.1:3128',
      'not a url hidden-pw',
      'http://:hidden-pw@127.0.0.1:3128',
    ]) {
      const res = await admin(s, 'PUT', `/devices/${s.deviceId}/proxy`, { url });
      expect(res.status, url).to.equal(400);
      expect(res.body, url).to.include({ success: false });
      expect((res.body.details as { path: string[] }[])[0]!.path, url).to.deep.equal(['url']);
      expect(JSON.stringify(res.body), url).not.to.include('hidden-pw');
    }
    expect((await admin(s, 'PUT', `/devices/${s.deviceId}/proxy`, {})).status).to.equal(400);
    expect((await admin(s, 'GET', `/devices/${s.deviceId}/proxy`)).status).to.equal(404);
  });

  it("When device A's proxy is set to tinyproxy with credentials, then A reconnects through it (tinyproxy's log), B does not, and A sends", async () => {
    const s = stack();
    expect(await tiny.targets(), 'nothing went through tinyproxy before').to.deep.equal([]);
    const put = await admin(s, 'PUT', `/devices/${s.deviceId}/proxy`, { url: tiny.url() });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(put.body.data).to.deep.include({
      url: `http://127.0.0.1:${tiny.port}`,
      scheme: 'http',
      hasCredentials: true,
    });
    expect(put.body.applied).to.equal('reconnecting');
    await waitFor(async () => (await tiny.targets()).includes(wsTarget), {
      what: "A's WebSocket through tinyproxy",
    });
    await s.waitForStatus('connected');
    const res = await s.api<{ messageId: string }>('POST', '/send', {
      to: '15550919001',
      text: 'via http proxy',
    });
    expect(res.status).to.equal(202);
    await waitFor(async () => (await s.inbox('15550919001')).length === 1, {
      what: 'the text through the proxy',
    });
    // B stayed connected directly all along: its socket never went through tinyproxy.
    expect((await s.api('GET', '/status', undefined, tokenB)).body.status).to.equal('connected');
    expect((await tiny.targets()).filter((t) => t === wsTarget)).to.have.length(1);
    const shown = await admin(s, 'GET', `/devices/${s.deviceId}/proxy`);
    expect(shown.body.data).to.deep.include({ url: `http://127.0.0.1:${tiny.port}`, hasCredentials: true });
  });

  it("When device A sends a text with a link and an attachment URL, then the gateway fetches both through A's proxy (to the address the guard vetted)", async () => {
    const s = stack();
    const before = (await tiny.targets()).length;
    const text = await s.api('POST', '/send', {
      to: '15550919011',
      text: `see http://127.0.0.1:${webPort}/page`,
    });
    expect(text.status, JSON.stringify(text.body)).to.equal(202);
    const doc = await s.api('POST', '/send', {
      to: '15550919011',
      attachment: { type: 'document', url: `http://127.0.0.1:${webPort}/doc.txt`, filename: 'doc.txt' },
    });
    expect(doc.status, JSON.stringify(doc.body)).to.equal(202);
    await waitFor(async () => (await s.inbox('15550919011')).length === 2, { what: 'both messages' });
    expect(webHits).to.include.members(['/page', '/doc.txt']);
    const through = (await tiny.targets()).slice(before);
    expect(
      through.filter((t) => t === `127.0.0.1:${webPort}`),
      'page and attachment through tinyproxy',
    ).to.have.length(2);
    // The document's upload to the simulator's media host (Baileys' fetchAgent) went through it too:
    // the only other target A had in this time.
    const upload = through.filter((t) => t !== `127.0.0.1:${webPort}` && t !== wsTarget);
    expect(upload, 'the media upload through tinyproxy').to.have.length.greaterThan(0);
  });

  it("When device B's proxy is microsocks with credentials, then B's WebSocket goes through it and not A's", async () => {
    const s = stack();
    const tinyBefore = (await tiny.targets()).length;
    const put = await admin(s, 'PUT', `/devices/${deviceB}/proxy`, { url: socks.url() });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(put.body.data).to.deep.include({ scheme: 'socks5', hasCredentials: true });
    await waitFor(async () => (await socks.targets()).includes(wsTarget), {
      what: "B's WebSocket through microsocks",
    });
    await s.waitForStatus('connected', 30_000, tokenB);
    const res = await s.api('POST', '/send', { to: '15550919002', text: 'via socks' }, tokenB);
    expect(res.status).to.equal(202);
    await waitFor(async () => (await s.inbox('15550919002')).length === 1, {
      what: 'the text through SOCKS5',
    });
    expect((await tiny.targets()).length, "B's connection is not tinyproxy's").to.equal(tinyBefore);
    expect(
      (await socks.targets()).filter((t) => t === wsTarget),
      'only B through microsocks',
    ).to.have.length(1);
  });

  it('When the credentials are wrong, then the device stays connecting with the reason, the metric counts it, and a message sent meanwhile waits and goes once they are right', async () => {
    const s = stack();
    const put = await admin(s, 'PUT', `/devices/${s.deviceId}/proxy`, {
      url: tiny.url({ user: HTTP_CREDS.user, pass: 'wrong-pass-xyz' }),
    });
    expect(put.status).to.equal(200);
    const status = await waitForReason(s, 'proxy_auth');
    expect(status.status).to.equal('connecting');
    expect(await senderMetrics(s)).to.match(
      new RegExp(`mgw_device_proxy_errors_total\\{device="${s.deviceId}",kind="auth"\\} [1-9]`),
    );
    const queued = await s.api<{ messageId: string }>('POST', '/send', { to: '15550919003', text: 'waits' });
    expect(queued.status, JSON.stringify(queued.body)).to.equal(202);
    expect(await s.inbox('15550919003')).to.deep.equal([]);
    expect((await admin(s, 'PUT', `/devices/${s.deviceId}/proxy`, { url: tiny.url() })).status).to.equal(200);
    await s.waitForStatus('connected');
    await waitFor(async () => (await s.inbox('15550919003')).length === 1, { what: 'the waiting text sent' });
  });

  it('When a proxy is dead, then its device is connecting with proxy_unreachable and the other device keeps sending', async () => {
    const s = stack();
    const dead = await freePort();
    expect(
      (await admin(s, 'PUT', `/devices/${deviceB}/proxy`, { url: `socks5://127.0.0.1:${dead}` })).status,
    ).to.equal(200);
    await waitForReason(s, 'proxy_unreachable', tokenB);
    const started = Date.now();
    const res = await s.api('POST', '/send', { to: '15550919004', text: 'A is not blocked' });
    expect(res.status).to.equal(202);
    await waitFor(async () => (await s.inbox('15550919004')).length === 1, {
      what: "A's text while B's proxy is dead",
    });
    // quiet: 1000 ms
    expect(Date.now() - started, "A's send is not held up by B's proxy").to.be.below(10_000);
    // Removed: B connects directly again.
    const del = await admin(s, 'DELETE', `/devices/${deviceB}/proxy`);
    expect(del.status).to.equal(200);
    await s.waitForStatus('connected', 40_000, tokenB);
  });

  it('When a device with a proxy is linked, then its pairing socket goes through the proxy before any sender holds it', async () => {
    const s = stack();
    const deviceC = 'proxy-device-c';
    const tokenC = await s.createToken(deviceC);
    const put = await admin(s, 'PUT', `/devices/${deviceC}/proxy`, { url: socks.url() });
    expect(put.body.applied, 'nobody holds a device not linked yet').to.equal('not-connected');
    const before = (await socks.targets()).filter((t) => t === wsTarget).length;
    const connect = await s.api<{ qrCode: string }>('POST', '/connect', undefined, tokenC);
    expect(connect.status, JSON.stringify(connect.body)).to.equal(200);
    // The QR is shown: only the connection service's pairing socket is open for C now.
    expect((await socks.targets()).filter((t) => t === wsTarget).length).to.be.greaterThan(before);
    await s.simApi('POST', '/phone/link', { qr: connect.body.qrCode, phone: '15550910003', name: 'Proxy C' });
    await s.waitForStatus('connected', 30_000, tokenC);
  });

  it('When a device is linked through a dead proxy, then the connect fails with the reason', async () => {
    const s = stack();
    const deviceD = 'proxy-device-d';
    const tokenD = await s.createToken(deviceD);
    const dead = await freePort();
    expect(
      (await admin(s, 'PUT', `/devices/${deviceD}/proxy`, { url: `http://127.0.0.1:${dead}` })).status,
    ).to.equal(200);
    const connect = await s.api('POST', '/connect', undefined, tokenD);
    expect(connect.status).to.equal(503);
    expect(connect.body).to.deep.equal({
      success: false,
      error: 'Could not start pairing: proxy_unreachable',
    });
    const shown = (await admin(s, 'GET', `/devices/${deviceD}`)).body as {
      device: Record<string, unknown>;
      pairing: Record<string, unknown>;
    };
    expect(shown.device).to.include({ status: 'disconnected', lastDisconnectReason: 'proxy_unreachable' });
    expect(shown.pairing).to.include({ state: 'failed', reason: 'proxy_unreachable' });
  });

  it('Then no proxy credential is in any log line, metric, API answer or Redis value in the clear', async () => {
    const s = stack();
    const logs = s.processes.map((p) => p.output.join('\n')).join('\n');
    const redisText = await everyValue(s.redis);
    const metrics = await senderMetrics(s);
    const answers = JSON.stringify([
      await admin(s, 'GET', `/devices/${s.deviceId}/proxy`),
      await admin(s, 'GET', `/devices/${s.deviceId}`),
      await admin(s, 'GET', '/devices'),
      (await s.api('GET', '/status')).body,
    ]);
    for (const secret of SECRETS) {
      expect(logs.includes(secret), `logs hold ${secret}`).to.equal(false);
      expect(redisText.includes(secret), `Redis holds ${secret}`).to.equal(false);
      expect(metrics.includes(secret), `metrics hold ${secret}`).to.equal(false);
      expect(answers.includes(secret), `answers hold ${secret}`).to.equal(false);
    }
    expect(redisText, 'the proxy is stored at all').to.include(`:{${s.deviceId}}:proxy`);
  });
});

/** Waits until GET /status says `connecting` with this reason; returns the status. */
async function waitForReason(s: Stack, reason: string, token?: string): Promise<Record<string, unknown>> {
  let last: Record<string, unknown> = {};
  await waitFor(
    async () => {
      last = (await s.api('GET', '/status', undefined, token)).body;
      return last.reason === reason;
    },
    { timeoutMs: 40_000, what: `status reason ${reason}` },
  ).catch((err: Error) => {
    throw new Error(`${err.message}: last ${JSON.stringify(last)}\n${s.dumpLogs(30)}`);
  });
  return last;
}
