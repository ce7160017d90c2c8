import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';
import { waitFor } from '@mgw/testing';
import { LeaseManager, LeaseRenewer, Liveness } from '../src/index.js';

/** Blocks this thread (the event loop) for `ms`, as a long synchronous burst of work would. */
function blockEventLoop(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describe('messenger: process liveness beaten from the renewer thread, and the takeover of a dead owner (real Redis)', function () {
  this.timeout(30_000);
  let redis: Redis;
  const run = randomBytes(3).toString('hex');
  // A set of this test's own, so the owners of other suites never show up in it.
  const key = `${keys.senderLiveness()}:test-${run}`;
  const devices: string[] = [];
  const device = () => {
    const id = `live-${run}-${devices.length}`;
    devices.push(id);
    return id;
  };
  const renewers: LeaseRenewer[] = [];
  const renewer = (owner: string, ttlMs = 1000) => {
    const r = new LeaseRenewer({
      redis: process.env.REDIS_URL!,
      owner,
      ttlMs: 30_000,
      renewMs: 5000,
      liveness: { key, ttlMs },
    });
    renewers.push(r);
    return r;
  };
  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    await Promise.all(renewers.map((r) => r.stop().catch(() => undefined)));
    for (const d of devices) await redis.del(keys.lease(d), keys.leaseEpoch(d), keys.handover(d));
    await redis.del(key);
    await redis.quit();
  });

  it('When an owner is judged, then only after a whole TTL of gap-free beats of the judge, never itself, and a gap of half a TTL starts the wait again', () => {
    const judge = new Liveness(redis, 'me', { key, ttlMs: 1000, forgetMs: 5000 });
    expect(judge.judge(10_000, ['x', 'me'])).to.deep.equal([]);
    expect(judge.judge(10_400, ['x', 'me'])).to.deep.equal([]);
    expect(judge.judge(10_800, ['x', 'me'])).to.deep.equal([]);
    expect(judge.judge(11_000, ['x', 'me'])).to.deep.equal(['x']);
    expect(judge.judge(11_400, ['x'])).to.deep.equal(['x']);
    // A gap of half a TTL (Redis slow or away, this process frozen): others may have missed their
    // beats in the same spell and look expired; wait a whole TTL again.
    expect(judge.judge(11_900, ['x', 'y'])).to.deep.equal([]);
    expect(judge.judge(12_300, ['x', 'y'])).to.deep.equal([]);
    expect(judge.judge(12_700, ['x', 'y'])).to.deep.equal([]);
    expect(judge.judge(12_900, ['x', 'y'])).to.deep.equal(['x', 'y']);
    // Not beating (a hung process): judges nobody.
    expect(judge.judge(13_000, ['x'], false)).to.deep.equal([]);
  });

  it('When an owner stops beating, then a live renewer reports it dead within the TTL plus a beat, and its lease is taken over with a new epoch although it had time left', async () => {
    const id = device();
    const ghost = (await new LeaseManager(redis, `ghost-${run}`, 60_000).acquire(id))!;
    // The ghost beat once, long enough ago for its 1 s liveness to have expired.
    const t = await redis.time();
    await redis.zadd(key, Number(t[0]) * 1000 - 500, `ghost-${run}`);
    const taker = renewer(`taker-${run}`);
    const reports: string[][] = [];
    taker.on('dead', (owners) => reports.push(owners));
    const started = Date.now();
    await taker.ready();
    await waitFor(async () => reports.some((o) => o.includes(`ghost-${run}`)), {
      what: 'the ghost reported dead',
      intervalMs: 50,
      timeoutMs: 15_000,
    });
    // Judged only after the taker beat for a whole TTL itself (a lower bound), and reported, not
    // left: quiet: 1300 ms.
    expect(Date.now() - started).to.be.within(1000, 15_000);
    const leases = new LeaseManager(redis, `taker-${run}`, 30_000);
    expect(await leases.acquireMany([id]), 'a live holder is not taken over').to.deep.equal([undefined]);
    const [taken] = await leases.acquireMany([id], [`ghost-${run}`]);
    expect(taken).to.deep.include({
      owner: `taker-${run}`,
      epoch: ghost.epoch + 1,
      takenFrom: `ghost-${run}`,
    });
    // The ghost, alive after all, finds its lease lost at its next renewal (fenced).
    expect(await new LeaseManager(redis, `ghost-${run}`, 60_000).renew(ghost)).to.equal('lost');
  });

  it('When a holder beats from its renewer thread while its event loop is blocked for three TTLs, then no other renewer ever reports it dead; after it stops cleanly it leaves the set', async () => {
    const busy = renewer(`busy-${run}`);
    const watcher = renewer(`watcher-${run}`);
    const reports: string[][] = [];
    watcher.on('dead', (owners) => reports.push(owners));
    await Promise.all([busy.ready(), watcher.ready()]);
    blockEventLoop(3_000);
    // The reports sent meanwhile arrive once the loop is free, before any sent after it: an owner
    // entered now as long expired, reported dead later, marks their end (an order, not a sleep).
    const t = await redis.time();
    await redis.zadd(key, Number(t[0]) * 1000 - 500, `marker-${run}`);
    await waitFor(() => reports.some((o) => o.includes(`marker-${run}`)), {
      what: 'the marker reported dead',
      intervalMs: 20,
    });
    await redis.zrem(key, `marker-${run}`);
    expect(reports.flat()).to.not.include(`busy-${run}`);
    expect(await redis.zscore(key, `busy-${run}`)).to.not.equal(null);
    await busy.stop();
    expect(await redis.zscore(key, `busy-${run}`)).to.equal(null);
  });
});
