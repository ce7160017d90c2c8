import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';
import { RedisMonitor, keySlot, waitFor } from '@mgw/testing';
import { IntervalLock, leaseHolder, leaseKeysBeside } from '../src/coordination/index.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The interval lock of periodic jobs every process schedules and one runs per interval (the event
 * log trim, the media sweep), on real Redis. Each "process" below has its own connection.
 */
describe('store: interval lock (real Redis)', () => {
  const run = randomBytes(3).toString('hex');
  let n = 0;
  const connections: Redis[] = [];
  const connect = () => {
    const c = new Redis(process.env.REDIS_URL!);
    connections.push(c);
    return c;
  };
  /** A fresh lock key, untagged like the product's global lock keys. */
  const lockKey = () => `test:interval-lock:${run}:${n++}`;
  const lock = (key: string, owner: string, intervalMs: number, redis = connect()) =>
    new IntervalLock(redis, { key, owner, intervalMs });

  after(async () => {
    const redis = connect();
    const found = await redis.keys(`test:interval-lock:${run}:*`);
    if (found.length) await redis.del(...found);
    for (const c of connections) c.disconnect();
  });

  it("When a lock key has a hash tag or none, then its epoch counter and reservation are in the lock's Cluster slot", () => {
    for (const key of [keys.eventLogTrimLock(), keys.mediaSweepLock(), keys.poolMoverLease('p1')]) {
      const beside = leaseKeysBeside(key);
      expect(beside.lease).to.equal(key);
      expect([keySlot(beside.fence), keySlot(beside.reservation)], key).to.deep.equal([
        keySlot(key),
        keySlot(key),
      ]);
    }
    expect(leaseKeysBeside('mgw:{pool:p1}:mover').fence).to.equal('mgw:{pool:p1}:mover:fence');
    expect(leaseKeysBeside('mgw:event-log:trim-lock').fence).to.equal(
      'mgw:event-log:trim-lock:{mgw:event-log:trim-lock}:fence',
    );
    // A brace that is no tag would end the whole-key tag early: refused rather than split over slots.
    expect(() => leaseKeysBeside('mgw:odd{}:lock')).to.throw(/brace/);
    expect(() => leaseKeysBeside('mgw:odd}:lock')).to.throw(/brace/);
  });

  it('When two processes race for an interval, then one runs the job; nobody else (the runner neither) runs it until the interval is over, then one runs it again', async function () {
    this.timeout(30_000);
    const key = lockKey();
    const intervalMs = 1500;
    const [a, b] = [lock(key, 'a', intervalMs), lock(key, 'b', intervalMs)];
    expect(a.holdMs).to.equal(1350);
    const runs: string[] = [];
    const job = (who: string) => () => Promise.resolve(runs.push(who)).then(() => who);
    const takenAt = Date.now();
    const first = await Promise.all([a.run(job('a')), b.run(job('b'))]);
    expect(first.filter(Boolean)).to.have.length(1);
    expect(runs).to.deep.equal(first.filter(Boolean));
    // Not given back when the job ended: the rest of the interval is skipped by both.
    expect(await Promise.all([a.run(job('a')), b.run(job('b'))])).to.deep.equal([undefined, undefined]);
    expect(runs).to.have.length(1);
    const redis = connect();
    expect(leaseHolder('token', (await redis.get(key))!).owner).to.equal(runs[0]);
    await waitFor(async () => (await redis.exists(key)) === 0, {
      intervalMs: 20,
      timeoutMs: 14_000,
      what: 'the lock to lapse',
    });
    // It lapsed on its own, not before its 1350 ms hold (Redis' clock and ours: 50 ms of slack),
    // and not held on: quiet: 1400 ms.
    expect(Date.now() - takenAt).to.be.within(1350 - 50, 14_000);
    const second = await Promise.all([a.run(job('a')), b.run(job('b'))]);
    expect(second.filter(Boolean)).to.have.length(1);
    expect(runs).to.have.length(2);
  });

  it('When a run outlasts its interval, then its holder keeps the lock meanwhile (nobody runs beside it) and it lapses after the run', async function () {
    this.timeout(30_000);
    const key = lockKey();
    const intervalMs = 1500;
    const [a, b] = [lock(key, 'a', intervalMs), lock(key, 'b', intervalMs)];
    let skipped = 0;
    const result = await a.run(async (lost) => {
      // Twice the interval: B's rounds come all along and find the lock held.
      const until = Date.now() + 2 * intervalMs;
      while (Date.now() < until) {
        expect(await b.run(() => Promise.resolve('b ran beside a'))).to.equal(undefined);
        skipped++;
        await sleep(100);
      }
      expect(lost.aborted).to.equal(false);
      return 'a done';
    });
    expect(result).to.equal('a done');
    // About 29 rounds of B when quiet (one per 100 ms of the 3 s); a loaded host runs fewer, and
    // a few are enough to show they came all along the run and found it held.
    expect(skipped).to.be.at.least(3);
    const redis = connect();
    // Kept after the run, renewed (its TTL was reset after the take) and never given back.
    expect(leaseHolder('token', (await redis.get(key))!).owner).to.equal('a');
    expect(await redis.pttl(key)).to.be.within(1, 1350);
    await waitFor(async () => (await b.run(() => Promise.resolve('b'))) === 'b', {
      intervalMs: 50,
      // It lapses at most 1.35 s after the last renewal: 10 x that.
      timeoutMs: 14_000,
      what: 'b to run once the lock lapsed',
    });
  });

  it('When the holder dies during its run, then its lock lapses within its TTL and another process runs the job', async function () {
    this.timeout(30_000);
    const key = lockKey();
    const intervalMs = 1500;
    const doomed = connect();
    const a = lock(key, 'a', intervalMs, doomed);
    const b = lock(key, 'b', intervalMs);
    let release!: () => void;
    const hung = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const aStarted = new Promise<void>((r) => (started = r));
    const aRun = a.run(async () => {
      started();
      await hung;
      return 'a';
    });
    await aStarted;
    // Its process gone: no renewal reaches Redis any more (each fails at once).
    doomed.disconnect();
    const diedAt = Date.now();
    // What is left of its hold, on Redis' clock: Redis expires it then, as nothing renews it.
    expect(await connect().pttl(key)).to.be.within(1, 1350);
    expect(await b.run(() => Promise.resolve('b'))).to.equal(undefined);
    let ranAt = 0;
    await waitFor(
      async () => {
        if ((await b.run(() => Promise.resolve('b'))) !== 'b') return false;
        ranAt = Date.now();
        return true;
      },
      { intervalMs: 20, timeoutMs: 14_000, what: 'b to run after a died' },
    );
    // B ran once that hold lapsed, and a's death did not leave the lock held: quiet: 1370 ms.
    expect(ranAt - diedAt).to.be.below(14_000);
    release();
    expect(await aRun).to.equal('a');
  });

  it('When the holder renews its lock during a run, then each renewal is one script call (compare and extend in one step), never a GET then a PEXPIRE', async () => {
    const key = lockKey();
    const sent: string[] = [];
    let extended = 0;
    const monitor = await RedisMonitor.start(process.env.REDIS_URL!, (args, byScript) => {
      if (!args.includes(key)) return;
      if (!byScript) sent.push(args[0]!.toUpperCase());
      else if (args[0]!.toUpperCase() === 'PEXPIRE') extended++;
    });
    try {
      // 270 ms TTL, renewed every 90 ms: a 500 ms run renews it several times.
      expect(await lock(key, 'a', 300).run(() => sleep(500).then(() => 'done'))).to.equal('done');
      await waitFor(() => extended >= 3, { intervalMs: 20, timeoutMs: 10_000, what: 'the renewals seen' });
    } finally {
      monitor.close();
    }
    // The take and every renewal: scripts, whose reads and writes no other client comes between.
    expect(sent.length).to.be.at.least(4);
    expect(
      [...new Set(sent)].every((c) => c === 'EVALSHA' || c === 'EVAL'),
      sent.join(' '),
    ).to.equal(true);
  });

  it("When the holder's lock lapsed and another took it, then the holder's renewal finds it lost, leaves the other's lock alone and aborts the holder's run", async () => {
    const key = lockKey();
    const redis = connect();
    // A renews every 90 ms (270 ms TTL).
    const a = lock(key, 'a', 300);
    const outcome = await a.run(async (lost) => {
      // A paused past its TTL meanwhile: the lock lapsed and another process took it (epoch 99).
      await redis.set(key, 'b:99', 'PX', 60_000);
      await new Promise<void>((resolve, reject) => {
        lost.addEventListener('abort', () => resolve());
        setTimeout(() => reject(new Error('the run was not told its lock was lost')), 5000).unref();
      });
      return String((lost.reason as Error).message);
    });
    expect(outcome).to.match(/lost$/);
    expect(await redis.get(key)).to.equal('b:99');
    // A's renewal would have cut it to 270 ms.
    expect(await redis.pttl(key)).to.be.above(55_000);
    // And no process runs the job while the other holds it.
    expect(await lock(key, 'c', 300).run(() => Promise.resolve('c'))).to.equal(undefined);
  });
});
