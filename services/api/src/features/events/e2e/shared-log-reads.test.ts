import { expect } from 'chai';
import { Redis } from 'ioredis';
import { Encryption, EventLog, publishEvent } from '@mgw/store';
import { SharedLogReads } from '../shared-log-reads.js';

describe('Events: the streams of a device share one read of its log, never one that hides an event (real Redis)', () => {
  let redis: Redis;
  let log: EventLog;
  let xranges = 0;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    log = new EventLog(redis, Encryption.fromEnv(), 24 * 3_600_000);
    // Counts the log's reads: EventLog reads its entries with XRANGE.
    const xrange = redis.xrange.bind(redis);
    redis.xrange = ((...args: Parameters<typeof xrange>) => {
      xranges++;
      return xrange(...args);
    }) as typeof redis.xrange;
  });
  after(async () => redis.quit());

  const newDevice = () => `shared-${Math.random().toString(36).slice(2, 8)}`;

  it('When 200 streams at the same cursor read at once, then Redis is read once and every stream gets the same events (the same objects)', async () => {
    const deviceId = newDevice();
    for (let i = 0; i < 5; i++)
      await publishEvent(redis, deviceId, 'session.status', { status: 'connected', i });
    const reads = new SharedLogReads(log);
    xranges = 0;
    const pages = await Promise.all(
      Array.from({ length: 200 }, () => reads.read(deviceId, { after: '0-0', limit: 100 })),
    );
    expect(xranges).to.equal(1);
    for (const page of pages)
      expect(page.events.map((e) => e.data)).to.deep.equal(pages[0]!.events.map((e) => e.data));
    expect(pages[0]!.events).to.have.length(5);
    // The same objects: each stream's output encodes an event once (sse-output.ts).
    expect(pages[199]!.events[0]).to.equal(pages[0]!.events[0]);
  });

  it('When the log grows while a read is under way, then a stream woken by that growth reads again instead of joining it', async () => {
    const deviceId = newDevice();
    await publishEvent(redis, deviceId, 'session.status', { status: 'connecting' });
    const reads = new SharedLogReads(log);
    const cursor = '0-0';
    const early = reads.read(deviceId, { after: cursor, limit: 100 });
    // An event is appended and heard before the early read answered.
    await publishEvent(redis, deviceId, 'session.status', { status: 'connected' });
    reads.grew(deviceId);
    const late = reads.read(deviceId, { after: cursor, limit: 100 });
    expect(late).to.not.equal(early);
    expect((await late).events.map((e) => (e.data as { status: string }).status)).to.deep.equal([
      'connecting',
      'connected',
    ]);
    // Different cursors or filters never share a read either.
    const other = reads.read(deviceId, { after: cursor, limit: 100, types: ['session.status'] });
    expect(other).to.not.equal(late);
    await Promise.all([early, other]);
  });

  it('When the subscription was restored (publications may be lost), then no read under way is joined', async () => {
    const deviceId = newDevice();
    await publishEvent(redis, deviceId, 'session.status', { status: 'connecting' });
    const reads = new SharedLogReads(log);
    const first = reads.read(deviceId, { after: '0-0', limit: 10 });
    reads.mayHaveGrown();
    const second = reads.read(deviceId, { after: '0-0', limit: 10 });
    expect(second).to.not.equal(first);
    await Promise.all([first, second]);
  });
});
