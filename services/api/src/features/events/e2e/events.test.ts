import net from 'node:net';
import { expect } from 'chai';
import { ERRORS, keys, newPlatformMessageId } from '@mgw/contracts';
import { publishEvent } from '@mgw/store';
import { waitFor } from '@mgw/testing';
import { EventLogTrimmer } from '../event-log-trimmer.js';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
  createPoolToken,
} from '../../../../test/helpers/api.js';
import { openSse, type Sse, type SseEvent } from '../../../../test/helpers/sse.js';

/**
 * The public reads of a device's event log, each against the API alone (no sender, no webhook):
 * - GET /events, the log's pages;
 * - GET /events/stream, the log as Server-Sent Events.
 * The log over a WebSocket (GET /events/ws) is events-socket.test.ts beside this file.
 */

interface Logged {
  cursor: string;
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}
interface Page {
  events: Logged[];
  nextCursor: string | null;
  truncated?: true;
}

describe('Events: GET /events reads the event log (the API alone: no sender, no webhook)', () => {
  let t: TestApi;
  let deviceId: string;
  let token: string;
  before(async () => (t = await startApi()));
  beforeEach(async () => {
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    await markConnected(t.redis, deviceId);
  });
  afterEach(async () => {
    await t.services.acceptor.queue(deviceId).obliterate({ force: true });
  });
  after(async () => t.close());

  const events = (query = '', as = token) =>
    call(`${t.api}/events${query ? `?${query}` : ''}`, { token: as });
  const page = async (query = '', as = token) => {
    const res = await events(query, as);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data as Page;
  };

  /** A list of `n` cancelled before any sender took it: batch.cancelled and n message.failed. */
  async function cancelledList(n: number): Promise<string> {
    const to = Array.from({ length: n }, (_, i) => String(15553000000 + i));
    const sent = await call(`${t.api}/send`, { token, json: { to, text: 'hello' } });
    expect(sent.status).to.equal(202);
    const batchId = String(sent.body.messageId);
    expect((await call(`${t.api}/batches/${batchId}/cancel`, { method: 'POST', token })).status).to.equal(
      200,
    );
    return batchId;
  }

  it('When events happened without a webhook, then GET /events pages through every one exactly once, oldest first', async () => {
    const batchId = await cancelledList(5);
    const all = await page('limit=1000');
    const types = all.events.map((e) => e.type);
    expect(types[0]).to.equal('session.status');
    expect(types.filter((x) => x === 'message.failed')).to.have.length(5);
    expect(types).to.include('batch.cancelled');
    expect(all.events.find((e) => e.type === 'batch.cancelled')!.data).to.include({ deviceId, batchId });
    expect(all.nextCursor).to.equal(all.events.at(-1)!.cursor);

    const paged: Logged[] = [];
    let after: string | null = null;
    for (let i = 0; i < 20; i++) {
      const p = await page(`limit=2${after ? `&after=${after}` : ''}`);
      expect(p.events.length).to.be.at.most(2);
      paged.push(...p.events);
      if (p.events.length === 0) {
        expect(p.nextCursor, 'an empty page keeps the cursor').to.equal(after);
        break;
      }
      after = p.nextCursor;
    }
    expect(paged).to.deep.equal(all.events);
    expect(new Set(paged.map((e) => e.cursor)).size).to.equal(paged.length);

    // New events come after the last cursor, and only they.
    await publishEvent(t.redis, deviceId, 'session.status', { status: 'disconnected' });
    const next = await page(`after=${after}`);
    expect(next.events.map((e) => e.data.status)).to.deep.equal(['disconnected']);
  });

  it('When types are given, then only those come, and the cursor still moves past the others', async () => {
    await cancelledList(3);
    const failed = await page('types=message.failed&limit=1000');
    expect(failed.events.map((e) => e.type)).to.deep.equal([
      'message.failed',
      'message.failed',
      'message.failed',
    ]);
    const two = await page('types=batch.cancelled,session.status');
    expect(two.events.map((e) => e.type)).to.deep.equal(['session.status', 'batch.cancelled']);
    const none = await page('types=message.read');
    expect(none.events).to.deep.equal([]);
    const all = await page('limit=1000');
    expect(none.nextCursor).to.equal(all.events.at(-1)!.cursor);
  });

  it('When the query is malformed, then 400 names the parameter', async () => {
    for (const after of ['abc', '1-2-3', '12345678901234567-0', '1-', '-1', '1.5-0'])
      for (const res of [await events(`after=${encodeURIComponent(after)}`)]) {
        expect(res.status, after).to.equal(400);
        expect(res.body.error).to.equal(ERRORS.invalidRequest);
        expect(JSON.stringify(res.body.details), after).to.include('after');
      }
    for (const types of ['message.unknown', 'message.sent,,message.read', 'MESSAGE.SENT']) {
      const res = await events(`types=${encodeURIComponent(types)}`);
      expect(res.status, types).to.equal(400);
      expect(JSON.stringify(res.body.details), types).to.include('types');
    }
    for (const limit of ['0', '1001', 'x']) {
      const res = await events(`limit=${limit}`);
      expect(res.status, limit).to.equal(400);
      expect(JSON.stringify(res.body.details)).to.include('limit');
    }
    expect((await events('cursor=1-0')).status).to.equal(400);
  });

  /** A raw log entry with a given stream id (an event from before the retained window). */
  const oldEntry = (log: string, streamId: string, id: string) =>
    t.redis.xadd(log, streamId, 'id', id, 'type', 'session.status', 'ts', '', 'data', '{}', 'sealed', '0');

  it('When the cursor is older than the retained window, then the answer starts at the oldest retained event with truncated', async () => {
    const old = Date.now() - (t.config.eventLog.retentionMs + 3_600_000);
    const log = keys.eventLog(deviceId);
    // Expired entries first (older ids than the session.status markConnected logged).
    await t.redis.del(log);
    await oldEntry(log, `${old}-1`, 'old-1');
    await oldEntry(log, `${old}-2`, 'old-2');
    await publishEvent(t.redis, deviceId, 'session.status', { status: 'later' });
    const retained = await page();
    expect(retained.truncated).to.equal(undefined);
    expect(retained.events.map((e) => e.id)).to.not.include('old-2');
    const stale = await page(`after=${old}-1`);
    expect(stale.truncated).to.equal(true);
    expect(stale.events.map((e) => e.cursor)).to.deep.equal(retained.events.map((e) => e.cursor));
    // From the last cursor on, nothing was dropped.
    const current = await page(`after=${stale.nextCursor}`);
    expect(current).to.deep.equal({ events: [], nextCursor: stale.nextCursor });
  });

  it('When the trimmer runs, then one API process cuts the expired entries of linked devices per interval', async () => {
    const log = keys.eventLog(deviceId);
    await t.redis.del(log);
    const old = Date.now() - (t.config.eventLog.retentionMs + 3_600_000);
    const pipe = t.redis.pipeline();
    for (let i = 1; i <= 300; i++)
      pipe.xadd(
        log,
        `${old}-${i}`,
        'id',
        `old-${i}`,
        'type',
        'session.status',
        'ts',
        '',
        'data',
        '{}',
        'sealed',
        '0',
      );
    await pipe.exec();
    await publishEvent(t.redis, deviceId, 'session.status', { status: 'kept' });
    await t.redis.sadd(keys.linkedDevices(), deviceId);
    await t.redis.del(keys.eventLogTrimLock());
    const deps = { redis: t.redis, eventLog: t.services.eventLog, logger: t.services.logger };
    try {
      expect(await new EventLogTrimmer(deps, 60_000).round()).to.be.at.least(200);
      expect(await t.redis.xlen(log)).to.be.below(101);
      // Another process in the same interval skips its round.
      expect(await new EventLogTrimmer(deps, 60_000).round()).to.equal(0);
      expect((await page()).events.map((e) => e.data.status)).to.deep.equal(['kept']);
    } finally {
      await t.redis.srem(keys.linkedDevices(), deviceId);
      await t.redis.del(keys.eventLogTrimLock());
    }
  });

  it("When another device's token reads, then it sees its own events only, whatever cursor it passes", async () => {
    await cancelledList(2);
    const mine = await page('limit=1000');
    const other = freshDeviceId();
    const otherToken = await createToken(t, { deviceId: other });
    const theirs = await page('limit=1000', otherToken);
    expect(theirs.events).to.deep.equal([]);
    await publishEvent(t.redis, other, 'session.status', { status: 'connected' });
    const withMyCursor = await page(`after=0-0`, otherToken);
    expect(withMyCursor.events.map((e) => e.data.deviceId)).to.deep.equal([other]);
    expect(withMyCursor.events.map((e) => e.id)).to.not.include.members(mine.events.map((e) => e.id));
  });

  it('When a received message is logged, then its text is sealed in Redis and opened in the answer', async () => {
    const text = `hi there ${Math.random()}`;
    await t.services.inbound.record(deviceId, {
      platformMessageId: newPlatformMessageId(),
      contact: { phone: '15553000999' },
      text,
      receivedAt: new Date(),
    });
    expect(JSON.stringify(await t.redis.xrange(keys.eventLog(deviceId), '-', '+'))).not.to.include(text);
    const received = await page('types=message.received');
    expect(received.events).to.have.length(1);
    expect(received.events[0]!.data).to.include({ text, from: '15553000999' });
  });

  it('When a pool token or another method asks, then 403 and 405', async () => {
    const poolToken = await createPoolToken(t, 'p-events');
    const res = await events('', poolToken);
    expect(res.status).to.equal(403);
    expect(res.body).to.deep.equal({ success: false, error: ERRORS.poolTokenNotAllowed });
    const post = await call(`${t.api}/events`, { method: 'POST', token });
    expect(post.status).to.equal(405);
  });
});

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
    // A keep-alive every 200 ms: waited for (up to 10 s), not slept for.
    await waitFor(() => s.comments.includes('keep-alive'), {
      timeoutMs: 10_000,
      intervalMs: 20,
      what: 'a keep-alive',
    });
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
    const poolToken = await createPoolToken(t, 'p-stream');
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
