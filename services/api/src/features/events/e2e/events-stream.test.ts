import net from 'node:net';
import { expect } from 'chai';
import { ERRORS } from '@mgw/contracts';
import { publishEvent } from '@mgw/store';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
} from '../../../../test/helpers/api.js';
import { openSse, type Sse, type SseEvent } from '../../../../test/helpers/sse.js';

const counted = async (t: TestApi, reason: string) =>
  (await t.services.metrics.eventStreamsCut.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;
const openNow = async (t: TestApi) =>
  (await t.services.metrics.eventStreamsOpen.get()).values.reduce((sum, v) => sum + v.value, 0);

describe('Events: GET /events/stream streams the event log as Server-Sent Events (the API alone)', () => {
  let t: TestApi;
  let deviceId: string;
  let token: string;
  const open: Sse[] = [];
  before(
    async () =>
      (t = await startApi({
        eventStream: { perToken: 3, keepAliveMs: 200, maxBufferedBytes: 64 * 1024, stallMs: 500 },
      })),
  );
  beforeEach(async () => {
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    await markConnected(t.redis, deviceId);
  });
  afterEach(() => open.splice(0).forEach((s) => s.close()));
  after(async () => t.close());

  const stream = async (query = '', headers: Record<string, string> = {}, as = token) => {
    const s = await openSse(`${t.api}/events/stream${query ? `?${query}` : ''}`, {
      authorization: `Bearer ${as}`,
      ...headers,
    });
    open.push(s);
    return s;
  };
  const publish = (n: number, from = 0) =>
    Promise.all(
      Array.from({ length: n }, (_, i) =>
        publishEvent(t.redis, deviceId, 'message.read', { deviceId, n: from + i }),
      ),
    );
  const numbers = (events: SseEvent[]) =>
    events.map((e) => (JSON.parse(e.data) as { data: { n: number } }).data.n);

  it('When events happen while a stream is open, then it gets each live, as the GET /events envelope, with keep-alives', async () => {
    await publish(2); // before the stream: not sent (live from now)
    const s = await stream();
    expect(s.status).to.equal(200);
    expect(s.headers.get('content-type')).to.match(/^text\/event-stream/);
    await publish(3, 10);
    const got = await s.waitFor(3);
    expect(numbers(got)).to.have.members([10, 11, 12]);
    const first = JSON.parse(got[0]!.data) as Record<string, unknown>;
    expect(first).to.have.keys('id', 'type', 'timestamp', 'data');
    expect(got[0]!.event).to.equal('message.read');
    expect(got[0]!.id).to.match(/^\d+-\d+$/);
    // The same events, the same cursors, as GET /events gives.
    const page = await call(`${t.api}/events?types=message.read&limit=1000`, { token });
    const logged = (page.body.data as { events: { cursor: string; id: string }[] }).events.slice(2);
    expect(got.map((e) => e.id)).to.deep.equal(logged.map((e) => e.cursor));
    expect(got.map((e) => (JSON.parse(e.data) as { id: string }).id)).to.deep.equal(logged.map((e) => e.id));
    await new Promise((r) => setTimeout(r, 450));
    expect(s.comments.filter((c) => c === 'keep-alive').length).to.be.at.least(1);
  });

  it('When a list is cancelled while a stream is open, then the events its scripts emit arrive live', async () => {
    const s = await stream();
    const to = ['15553000001', '15553000002'];
    const sent = await call(`${t.api}/send`, { token, json: { to, text: 'hello' } });
    expect(sent.status).to.equal(202);
    const batchId = String(sent.body.messageId);
    const cancel = await call(`${t.api}/batches/${batchId}/cancel`, { method: 'POST', token });
    expect(cancel.status).to.equal(200);
    await s.waitFor(2, 'message.failed');
    const [cancelled] = await s.waitFor(1, 'batch.cancelled');
    expect(JSON.parse(cancelled!.data).data).to.include({ deviceId, batchId });
    await t.services.acceptor.queue(deviceId).obliterate({ force: true });
  });

  it('When a client resumes with Last-Event-ID after a gap, then it gets every event after it exactly once, in order, then live', async () => {
    const s = await stream();
    await publish(3);
    const seen = await s.waitFor(3);
    s.close();
    await publish(250, 100); // more than one page while away
    const resumed = await stream('', { 'last-event-id': seen.at(-1)!.id! });
    await resumed.waitFor(250);
    await publish(1, 1000);
    const all = await resumed.waitFor(251);
    expect(all).to.have.length(251);
    expect(numbers(all.slice(0, 250)).sort((a, b) => a - b)).to.deep.equal(
      Array.from({ length: 250 }, (_, i) => 100 + i),
    );
    expect(numbers(all.slice(250))).to.deep.equal([1000]);
    const ids = all.map((e) => e.id!);
    expect(new Set(ids).size).to.equal(ids.length);
    // In log order: each cursor after the one before.
    const page = await call(`${t.api}/events?after=${seen.at(-1)!.id}&limit=1000`, { token });
    expect(ids).to.deep.equal(
      (page.body.data as { events: { cursor: string }[] }).events.map((e) => e.cursor),
    );
    // `after` in the URL does the same for clients that cannot set headers.
    const byQuery = await stream(`after=${ids[247]}`);
    expect(numbers(await byQuery.waitFor(3))).to.deep.equal(numbers(all.slice(248)));
  });

  it('When types are given, then only those come; another device never shows', async () => {
    const other = freshDeviceId();
    const otherToken = await createToken(t, { deviceId: other });
    const s = await stream('types=message.failed,session.status');
    const mine = await stream();
    const theirs = await stream('', {}, otherToken);
    await publish(2);
    await publishEvent(t.redis, deviceId, 'session.status', { deviceId, status: 'disconnected' });
    await publishEvent(t.redis, deviceId, 'message.failed', { deviceId, n: 7 });
    await publishEvent(t.redis, other, 'message.failed', { deviceId: other, n: 99 });
    const got = await s.waitFor(2);
    expect(got.map((e) => e.event)).to.deep.equal(['session.status', 'message.failed']);
    await mine.waitFor(4);
    expect(numbers((await theirs.waitFor(1)).slice(0, 1))).to.deep.equal([99]);
    await new Promise((r) => setTimeout(r, 200));
    expect(
      mine.events.every(
        (e) => (JSON.parse(e.data) as { data: { deviceId: string } }).data.deviceId === deviceId,
      ),
    ).to.equal(true);
    expect(theirs.events).to.have.length(1);
  });

  it('When a token asks for more streams than it may hold, then 429 before streaming, and a closed one frees its place', async () => {
    const streams = [await stream(), await stream(), await stream()];
    const over = await call(`${t.api}/events/stream`, { token });
    expect(over.status).to.equal(429);
    expect(over.body).to.deep.equal({ success: false, error: ERRORS.tooManyEventStreams });
    streams[0]!.close();
    for (let i = 0; i < 50 && (await openNow(t)) > 2; i++) await new Promise((r) => setTimeout(r, 20));
    const again = await stream();
    expect(again.status).to.equal(200);
  });

  it('When a reader does not read, then it is cut as slow_reader while another reader still gets every event', async function () {
    this.timeout(120_000);
    // An API of its own, with seconds of patience: the reader runs in this process beside the
    // server, and on a busy machine a pause of this process past the suite's 500 ms stall can cut
    // the reader that reads too (as it did the WebSocket test's in CI).
    const own = await startApi({
      eventStream: { perToken: 3, keepAliveMs: 5000, maxBufferedBytes: 64 * 1024, stallMs: 3000 },
    });
    const tk = await createToken(own, { deviceId });
    const { port } = new URL(own.url);
    const raw = net.connect(Number(port), '127.0.0.1');
    raw.on('error', () => undefined);
    const connected = new Promise<void>((resolve) => raw.once('connect', () => resolve()));
    const reader = await openSse(`${own.api}/events/stream`, { authorization: `Bearer ${tk}` });
    try {
      await connected;
      raw.pause(); // never reads
      raw.write(
        `GET /api/messenger/v1/events/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tk}\r\n\r\n`,
      );
      for (let i = 0; i < 250 && (await openNow(own)) < 2; i++) await new Promise((r) => setTimeout(r, 20));
      const big = 'x'.repeat(256 * 1024);
      for (let i = 0; i < 48; i++)
        await publishEvent(own.redis, deviceId, 'message.read', { deviceId, n: i, big });
      const got = await reader.waitFor(48, undefined, 60_000);
      expect(numbers(got)).to.deep.equal(Array.from({ length: 48 }, (_, i) => i));
      for (let i = 0; i < 600 && (await counted(own, 'slow_reader')) === 0; i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(await counted(own, 'slow_reader')).to.equal(1);
      // The cut socket goes: reading it now ends.
      raw.resume();
      await new Promise<void>((resolve) => (raw.destroyed ? resolve() : raw.once('close', () => resolve())));
    } finally {
      reader.close();
      raw.destroy();
      await own.close();
    }
  });

  it('When Last-Event-ID or a query value is malformed, then 400 names it', async () => {
    for (const bad of ['abc', '1-2-3', '12345678901234567-0']) {
      const res = await call(`${t.api}/events/stream`, { token, headers: { 'last-event-id': bad } });
      expect(res.status, bad).to.equal(400);
      expect(res.body.error).to.equal(ERRORS.invalidRequest);
      expect(JSON.stringify(res.body.details)).to.include('Last-Event-ID');
    }
    const types = await call(`${t.api}/events/stream?types=message.unknown`, { token });
    expect(types.status).to.equal(400);
    expect(JSON.stringify(types.body.details)).to.include('types');
    const after = await call(`${t.api}/events/stream?after=x`, { token });
    expect(after.status).to.equal(400);
    expect(JSON.stringify(after.body.details)).to.include('after');
  });

  it('When a pool token asks, then 403', async () => {
    const { value: poolToken } = await t.services.tokens.create({ name: 'pool', poolId: 'p-stream' });
    const res = await call(`${t.api}/events/stream`, { token: poolToken });
    expect(res.status).to.equal(403);
    expect(res.body).to.deep.equal({ success: false, error: ERRORS.poolTokenNotAllowed });
  });

  it('When a stream outlives the request timeouts, then it goes on; when the API shuts down, its streams end', async () => {
    // The HTTP timeouts bound how long a request takes to arrive, not how long its answer lasts.
    const own = await startApi({ http: { requestTimeoutMs: 300, headersTimeoutMs: 300 } });
    const tk = await createToken(own, { deviceId });
    const s = await openSse(`${own.api}/events/stream`, { authorization: `Bearer ${tk}` });
    expect(await openNow(own)).to.equal(1);
    await new Promise((r) => setTimeout(r, 1000));
    await publishEvent(own.redis, deviceId, 'message.read', { deviceId, n: 1 });
    expect(numbers(await s.waitFor(1))).to.deep.equal([1]);
    await own.services.eventStreams.close();
    await s.ended;
    expect(await counted(own, 'shutdown')).to.equal(1);
    expect(await openNow(own)).to.equal(0);
    await own.close();
  });
});
