import type { IncomingMessage } from 'node:http';
import { expect } from 'chai';
import WebSocket from 'ws';
import { ERRORS } from '@mgw/contracts';
import { publishEvent } from '@mgw/store';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
  createPoolToken,
} from '../../../../test/helpers/api.js';
import { rawRequest } from '../../../../test/helpers/raw-http.js';

interface Frame {
  type: string;
  cursor?: string;
  id?: string;
  timestamp?: string;
  data?: { deviceId: string; n: number };
  after?: string;
}

/** A WebSocket of GET /events/ws with the frames it got; or the HTTP answer that refused it. */
interface Socket {
  ws: WebSocket;
  frames: Frame[];
  /** Resolves once `n` frames (of the given type, or any) arrived; rejects after `ms`. */
  waitFor(n: number, type?: string, ms?: number): Promise<Frame[]>;
  closed: Promise<{ code: number; reason: string }>;
}

type Opened = { ok: true; socket: Socket } | { ok: false; status: number; body: Record<string, unknown> };

function openWs(
  url: string,
  opts: { headers?: Record<string, string>; protocols?: string[]; autoPong?: boolean } = {},
) {
  const ws = new WebSocket(url, opts.protocols ?? [], {
    headers: opts.headers ?? {},
    ...(opts.autoPong === false ? { autoPong: false } : {}),
  });
  const frames: Frame[] = [];
  let waiters: (() => void)[] = [];
  ws.on('message', (data) => {
    frames.push(JSON.parse(String(data)) as Frame);
    waiters.forEach((w) => w());
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => {
      resolve({ code, reason: reason.toString() });
      waiters.forEach((w) => w());
    }),
  );
  const matching = (type?: string) => frames.filter((f) => !type || f.type === type);
  const socket: Socket = {
    ws,
    frames,
    closed,
    waitFor: (n, type, ms = 10_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (matching(type).length >= n) {
            clearTimeout(timer);
            waiters = waiters.filter((w) => w !== check);
            resolve(matching(type));
          }
        };
        const timer = setTimeout(
          () => reject(new Error(`${matching(type).length} of ${n} ${type ?? 'frames'} after ${ms} ms`)),
          ms,
        );
        waiters.push(check);
        check();
      }),
  };
  return new Promise<Opened>((resolve, reject) => {
    ws.once('open', () => resolve({ ok: true, socket }));
    ws.once('unexpected-response', (_req, res: IncomingMessage) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ ok: false, status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    ws.once('error', (err) => reject(err));
  });
}

const counted = async (t: TestApi, reason: string, transport = 'websocket') =>
  (await t.services.metrics.eventStreamsCut.get()).values.find(
    (v) => v.labels.reason === reason && v.labels.transport === transport,
  )?.value ?? 0;
const openNow = async (t: TestApi) =>
  (await t.services.metrics.eventStreamsOpen.get()).values.reduce((sum, v) => sum + v.value, 0);
const until = async (what: () => Promise<boolean>, ms = 5000) => {
  for (const end = Date.now() + ms; Date.now() < end;) {
    if (await what()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('condition not met in time');
};

describe('Events: GET /events/ws streams the event log over a WebSocket (the API alone, a real ws client)', () => {
  let t: TestApi;
  let deviceId: string;
  let token: string;
  let wsBase: string;
  const open: WebSocket[] = [];
  before(async () => {
    t = await startApi({
      eventStream: { perToken: 3, keepAliveMs: 200, maxBufferedBytes: 64 * 1024, stallMs: 500 },
    });
    wsBase = `${t.api.replace(/^http/, 'ws')}/events/ws`;
  });
  beforeEach(async () => {
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    await markConnected(t.redis, deviceId);
  });
  afterEach(() => open.splice(0).forEach((ws) => ws.terminate()));
  after(async () => t.close());

  /** Opens a socket that must open (the token in the Authorization header unless told otherwise). */
  const socket = async (query = '', as = token, opts: Parameters<typeof openWs>[1] = {}) => {
    const r = await openWs(`${wsBase}${query ? `?${query}` : ''}`, {
      headers: { authorization: `Bearer ${as}` },
      ...opts,
    });
    if (!r.ok) throw new Error(`refused: ${r.status} ${JSON.stringify(r.body)}`);
    open.push(r.socket.ws);
    return r.socket;
  };
  const refused = async (query: string, opts: Parameters<typeof openWs>[1]) => {
    const r = await openWs(`${wsBase}${query ? `?${query}` : ''}`, opts);
    if (r.ok) {
      open.push(r.socket.ws);
      throw new Error('the socket opened');
    }
    return r;
  };
  const publish = (n: number, from = 0, device = deviceId) =>
    Promise.all(
      Array.from({ length: n }, (_, i) =>
        publishEvent(t.redis, device, 'message.read', { deviceId: device, n: from + i }),
      ),
    );
  const numbers = (frames: Frame[]) => frames.map((f) => f.data!.n);

  it('When a client has no token, a wrong one, a pool token or no upgrade, then the API error JSON before any upgrade', async () => {
    const none = await refused('', {});
    expect(none.status).to.equal(401);
    expect(none.body).to.deep.equal({ success: false, error: ERRORS.invalidToken });
    const wrong = await refused('', { headers: { authorization: 'Bearer mgw_not-a-token' } });
    expect(wrong.status).to.equal(401);
    const poolToken = await createPoolToken(t, 'p-ws');
    const pool = await refused('', { headers: { authorization: `Bearer ${poolToken}` } });
    expect(pool.status).to.equal(403);
    expect(pool.body).to.deep.equal({ success: false, error: ERRORS.poolTokenNotAllowed });
    const badCursor = await refused('after=x', { headers: { authorization: `Bearer ${token}` } });
    expect(badCursor.status).to.equal(400);
    expect(JSON.stringify(badCursor.body.details)).to.include('after');
    const badTypes = await refused('types=message.unknown', {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(badTypes.status).to.equal(400);
    // A plain GET (no upgrade): 426 with the error JSON, as the OpenAPI document says.
    const plain = await call(`${t.api}/events/ws`, { token });
    expect(plain.status).to.equal(426);
    expect(plain.body).to.deep.equal({ success: false, error: ERRORS.webSocketUpgradeRequired });
    expect(plain.headers.get('upgrade')).to.equal('websocket');
    // None of these was counted as a stream.
    expect(await openNow(t)).to.equal(0);
  });

  it('When a browser offers the token as a subprotocol, then it is in, and the answer names only mgw.events.v1', async () => {
    const s = await socket('', 'unused', {
      headers: {},
      protocols: ['mgw.events.v1', `mgw.bearer.${token}`],
    });
    expect(s.ws.protocol).to.equal('mgw.events.v1');
    await publish(1, 5);
    expect(numbers(await s.waitFor(1))).to.deep.equal([5]);
    // The token without the stream's protocol: a browser would fail the handshake, so 400 says why.
    const alone = await refused('', { protocols: [`mgw.bearer.${token}`] });
    expect(alone.status).to.equal(400);
    expect(JSON.stringify(alone.body.details)).to.include('Sec-WebSocket-Protocol');
    const wrong = await refused('', { protocols: ['mgw.events.v1', 'mgw.bearer.mgw_wrong'] });
    expect(wrong.status).to.equal(401);
  });

  it('When events happen while a socket is open, then each arrives in order as one JSON frame with the GET /events cursor', async () => {
    await publish(2); // before the socket: not sent (live from now)
    const s = await socket();
    for (let i = 0; i < 20; i++) await publish(1, 10 + i);
    const got = await s.waitFor(20);
    expect(numbers(got)).to.deep.equal(Array.from({ length: 20 }, (_, i) => 10 + i));
    expect(got[0]).to.have.keys('type', 'cursor', 'id', 'timestamp', 'data');
    expect(got[0]!.type).to.equal('message.read');
    const page = await call(`${t.api}/events?types=message.read&limit=1000`, { token });
    const logged = (page.body.data as { events: { cursor: string; id: string }[] }).events.slice(2);
    expect(got.map((f) => f.cursor)).to.deep.equal(logged.map((e) => e.cursor));
    expect(got.map((f) => f.id)).to.deep.equal(logged.map((e) => e.id));
    // Another device's events never show.
    const other = freshDeviceId();
    await publish(1, 99, other);
    await publish(1, 30);
    expect(numbers(await s.waitFor(21))).to.deep.equal([...numbers(got), 30]);
  });

  it('When a client reconnects with after=<cursor> after a gap, then it gets every event after it exactly once, in order, then live', async () => {
    const s = await socket();
    await publish(3);
    const seen = await s.waitFor(3);
    s.ws.close();
    await s.closed;
    for (let i = 0; i < 250; i++) await publish(1, 100 + i); // more than one page while away
    const resumed = await socket(`after=${seen.at(-1)!.cursor}`);
    await resumed.waitFor(250);
    await publish(1, 1000);
    const all = await resumed.waitFor(251);
    expect(numbers(all)).to.deep.equal([...Array.from({ length: 250 }, (_, i) => 100 + i), 1000]);
    const cursors = all.map((f) => f.cursor!);
    expect(new Set(cursors).size).to.equal(cursors.length);
    const page = await call(`${t.api}/events?after=${seen.at(-1)!.cursor}&limit=1000`, { token });
    expect(cursors).to.deep.equal(
      (page.body.data as { events: { cursor: string }[] }).events.map((e) => e.cursor),
    );
  });

  it('When types are given, then only those come', async () => {
    const s = await socket('types=message.failed,session.status');
    await publish(2);
    await publishEvent(t.redis, deviceId, 'session.status', { deviceId, status: 'disconnected' });
    await publishEvent(t.redis, deviceId, 'message.failed', { deviceId, n: 7 });
    const got = await s.waitFor(2);
    expect(got.map((f) => f.type)).to.deep.equal(['session.status', 'message.failed']);
    await new Promise((r) => setTimeout(r, 200));
    expect(s.frames).to.have.length(2);
  });

  it('When a token holds its share across SSE and WebSocket, then one more of either is 429, and a closed one frees its place', async () => {
    const a = await socket();
    await socket();
    const abort = new AbortController();
    const sse = await fetch(`${t.api}/events/stream`, {
      headers: { authorization: `Bearer ${token}` },
      signal: abort.signal,
    });
    expect(sse.status).to.equal(200);
    try {
      const over = await refused('', { headers: { authorization: `Bearer ${token}` } });
      expect(over.status).to.equal(429);
      expect(over.body).to.deep.equal({ success: false, error: ERRORS.tooManyEventStreams });
      const overSse = await call(`${t.api}/events/stream`, { token });
      expect(overSse.status).to.equal(429);
      a.ws.close();
      await until(async () => (await openNow(t)) === 2);
      await socket();
    } finally {
      abort.abort();
    }
  });

  it('When a reader does not read, then it is cut (slow_reader once its socket is full, dead_peer if its unanswered pings come first) while another reader still gets every event', async function () {
    this.timeout(240_000);
    // An API of its own, with seconds of patience: the readers run in this process beside the
    // server, and on a busy machine (CI: four files at a time on two cores) a pause of this
    // process longer than the suite's 200 ms ping / 500 ms stall cut the reader that reads too.
    const own = await startApi({
      eventStream: { perToken: 3, keepAliveMs: 5000, maxBufferedBytes: 64 * 1024, stallMs: 5000 },
    });
    try {
      const tk = await createToken(own, { deviceId });
      const opened = async () => {
        const r = await openWs(`${own.api.replace(/^http/, 'ws')}/events/ws`, {
          headers: { authorization: `Bearer ${tk}` },
        });
        if (!r.ok) throw new Error(`refused: ${r.status} ${JSON.stringify(r.body)}`);
        open.push(r.socket.ws);
        return r.socket;
      };
      // A reader that stopped reading answers no ping either: whichever check sees it first cuts
      // it (serially here its socket fills first; on a busy machine a ping may go unanswered first).
      const cuts = async () => (await counted(own, 'slow_reader')) + (await counted(own, 'dead_peer'));
      const slow = await opened();
      slow.ws.pause(); // its socket is read no more
      const reader = await opened();
      // The kernel's loopback buffers may hold tens of MB for a socket that stopped reading (here
      // tcp_rmem reaches 32 MB): events go on, 4 MiB at a time, until the server cuts that reader —
      // bounded at 96 MiB; on a busy machine the server (this process) may still be writing what
      // was published when the loop ends.
      const big = 'x'.repeat(256 * 1024);
      let n = 0;
      while (n < 384 && (await cuts()) === 0) {
        for (const end = n + 16; n < end; n++)
          await publishEvent(own.redis, deviceId, 'message.read', { deviceId, n, big });
        await new Promise((r) => setTimeout(r, 800));
      }
      await until(async () => (await cuts()) > 0, 30_000);
      // Once cut, nothing more reaches it; the other reader goes on with every event.
      for (let i = n; i < n + 4; i++)
        await publishEvent(own.redis, deviceId, 'message.read', { deviceId, n: i, big });
      // Up to 96 MiB to read back: 30 s was too few beside the parallel suite on 2 busy cores (CI).
      const got = await reader.waitFor(n + 4, undefined, 90_000);
      expect(numbers(got)).to.deep.equal(Array.from({ length: n + 4 }, (_, i) => i));
      // Read now: what was buffered before the cut, then how it ended. A dead peer's socket is
      // dropped without a close frame (1006). A slow reader's 1008 frame waits behind what the
      // reader did not take, and its socket goes END_GRACE_MS after it: the frame arrives only if
      // the buffers had room for it by then (they did when a quiet machine cut it early, as the
      // suite's 500 ms stall did; not once they are full for seconds), else 1006 too.
      const slowCut = (await counted(own, 'slow_reader')) > 0;
      slow.ws.resume();
      const { code, reason } = await slow.closed;
      // One cut, of the reader that stopped reading (the other got every event above).
      expect(await cuts()).to.equal(1);
      expect(`${code} ${reason}`).to.be.oneOf(slowCut ? ['1008 slow_reader', '1006 '] : ['1006 ']);
      expect(slow.frames.length).to.be.at.most(n);
    } finally {
      // Its sockets first: the server's close waits for every connection to end.
      open.splice(0).forEach((ws) => ws.terminate());
      await own.close();
    }
  });

  it('When a peer stops answering pings, then it is cut as dead_peer', async () => {
    const before = await counted(t, 'dead_peer');
    const s = await socket('', token, { autoPong: false });
    await s.closed;
    expect(await counted(t, 'dead_peer')).to.equal(before + 1);
    // A peer that answers stays: three keep-alive periods on.
    const alive = await socket();
    await new Promise((r) => setTimeout(r, 700));
    expect(alive.ws.readyState).to.equal(WebSocket.OPEN);
  });

  it('When upgrades pass the rate limit, then the next one is refused 429 as JSON before the upgrade; other requests asking to upgrade are served as usual', async () => {
    const own = await startApi({ rateLimits: { messages: 2 } });
    try {
      const tk = await createToken(own, { deviceId });
      const url = `${own.api.replace(/^http/, 'ws')}/events/ws`;
      const headers = { authorization: `Bearer ${tk}` };
      for (let i = 0; i < 2; i++) {
        const r = await openWs(url, { headers });
        if (!r.ok) throw new Error(`refused: ${r.status} ${JSON.stringify(r.body)}`);
        r.socket.ws.close();
      }
      const over = await openWs(url, { headers });
      expect(over.ok).to.equal(false);
      if (over.ok) return;
      expect(over.status).to.equal(429);
      expect(over.body).to.include({ success: false, error: ERRORS.rateLimited });
      // An upgrade asked of a plain route (h2c, say) is answered as HTTP, as without WebSocket support.
      const status = await rawRequest(
        own.url,
        [
          `GET /api/messenger/v1/status HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c\r\nAuthorization: Bearer ${tk}\r\n\r\n`,
        ],
        { untilAnswered: true },
      );
      expect(status.status).to.equal(200);
      expect((status.body as { status?: string }).status).to.be.a('string');
      // With a body too (curl --http2 on http:// asks for h2c so): the body is read as usual.
      const body = JSON.stringify({ to: '15550001234', text: 'hello over h2c' });
      const sent = await rawRequest(
        own.url,
        [
          'POST /api/messenger/v1/send HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\n' +
            `Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\nContent-Type: application/json\r\n` +
            `Content-Length: ${body.length}\r\nAuthorization: Bearer ${tk}\r\n\r\n${body}`,
        ],
        { untilAnswered: true },
      );
      expect(sent.status, JSON.stringify(sent.body)).to.equal(202);
      await own.services.acceptor.queue(deviceId).obliterate({ force: true });
      const unknown = await rawRequest(own.url, [
        'GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n',
      ]);
      expect(unknown.status).to.equal(404);
      expect(unknown.body).to.deep.equal({ success: false, error: ERRORS.notFound });
    } finally {
      await own.close();
    }
  });

  it('When the API shuts down, then its sockets close 1001 shutdown and nothing stays open', async () => {
    const own = await startApi();
    const tk = await createToken(own, { deviceId });
    const r = await openWs(`${own.api.replace(/^http/, 'ws')}/events/ws`, {
      headers: { authorization: `Bearer ${tk}` },
    });
    if (!r.ok) throw new Error(`refused: ${r.status}`);
    await publishEvent(own.redis, deviceId, 'message.read', { deviceId, n: 1 });
    expect(numbers(await r.socket.waitFor(1))).to.deep.equal([1]);
    await own.services.eventStreams.close();
    expect(await r.socket.closed).to.deep.equal({ code: 1001, reason: 'shutdown' });
    expect(await counted(own, 'shutdown')).to.equal(1);
    expect(await openNow(own)).to.equal(0);
    // The upgrade was logged like any request (status 101, the route template, no token).
    const line = own.logs.find((l) => l.message === 'request' && l.status === 101);
    expect(line).to.include({ route: '/api/messenger/v1/events/ws', method: 'GET' });
    expect(JSON.stringify(own.logs)).not.to.include(tk);
    await own.close();
  });
});
