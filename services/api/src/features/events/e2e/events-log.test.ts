import { expect } from 'chai';
import { ERRORS, keys, newPlatformMessageId } from '@mgw/contracts';
import { publishEvent } from '@mgw/store';
import { EventLogTrimmer } from '../event-log-trimmer.js';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
} from '../../../../test/helpers/api.js';

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
    const { value: poolToken } = await t.services.tokens.create({ name: 'pool', poolId: 'p-events' });
    const res = await events('', poolToken);
    expect(res.status).to.equal(403);
    expect(res.body).to.deep.equal({ success: false, error: ERRORS.poolTokenNotAllowed });
    const post = await call(`${t.api}/events`, { method: 'POST', token });
    expect(post.status).to.equal(405);
  });
});
