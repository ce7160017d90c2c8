import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { waitFor } from '@mgw/testing';
import {
  FencedLeases,
  LivenessSet,
  type BeatReply,
  leaseHolder,
  type LeaseForm,
  type LeaseKeys,
} from '../src/coordination/index.js';

/**
 * The lease with fencing and the liveness set themselves, apart from their users (device leases,
 * webhook delivery leases, the senders' and connection services' liveness): the same scripts,
 * with each user's differences as parameters.
 */
describe('store: leases with fencing and liveness sets, generic (real Redis)', () => {
  let redis: Redis;
  const run = randomBytes(3).toString('hex');
  let n = 0;
  const keysOf = (id: string): LeaseKeys => ({
    lease: `test:coord:{${run}-${id}}:lease`,
    fence: `test:coord:{${run}-${id}}:fence`,
    reservation: `test:coord:{${run}-${id}}:reserved`,
  });
  const id = () => `t${n++}`;
  const leases = (form: LeaseForm, ttlMs = 5000) => new FencedLeases(redis, { keys: keysOf, form, ttlMs });

  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    const found = await redis.keys(`test:coord:{${run}-*`);
    if (found.length) await redis.del(...found);
    await redis.quit();
  });

  for (const form of ['json', 'token'] as const) {
    it(`When two owners race for a ${form} lease, then one takes it, epochs grow per take and only the holder renews and releases it`, async () => {
      const l = leases(form);
      const d = id();
      const [a, b] = await Promise.all([l.acquire(d, 'a'), l.acquire(d, 'b')]);
      expect([a, b].filter(Boolean)).to.have.length(1);
      const first = (a ?? b)!;
      expect(first.epoch).to.equal(1);
      expect(await l.current(d)).to.deep.equal({ id: d, owner: first.owner, epoch: 1 });
      const raw = (await redis.get(keysOf(d).lease))!;
      expect(leaseHolder(form, raw)).to.deep.equal({ owner: first.owner, epoch: 1 });
      if (form === 'token') expect(raw).to.equal(`${first.owner}:1`);
      else expect(JSON.parse(raw)).to.deep.equal({ owner: first.owner, epoch: 1 });

      const stranger = { id: d, owner: 'z', epoch: 1 };
      expect(await l.renew(stranger)).to.equal('lost');
      expect(await l.release(stranger)).to.equal(false);
      expect(await l.renew(first)).to.equal('renewed');
      expect(await l.release(first)).to.equal(true);
      expect(await l.renew(first)).to.equal('missing');

      const again = (await l.acquire(d, 'b'))!;
      // The release moved the counter on: the next take is epoch 3, and the old epoch is fenced.
      expect(again.epoch).to.equal(3);
      expect(await l.renew(first)).to.equal('lost');
    });
  }

  it('When a lease lapsed, then a batch renewal restores it while nobody took it since, and calls it lost once someone did', async () => {
    // The lapse is a DEL, not a wait; the TTL is long enough that the restored lease is still
    // there when it is read back on a loaded host.
    const l = leases('token', 30_000);
    const [d1, d2] = [id(), id()];
    const [h1, h2] = await l.acquireMany([d1, d2], 'me');
    await redis.del(keysOf(d1).lease, keysOf(d2).lease);
    await leases('token').acquire(d2, 'other');
    expect(await l.renewMany([h1!, h2!])).to.deep.equal(['restored', 'lost']);
    expect(await redis.get(keysOf(d1).lease)).to.equal('me:1');
    expect(await redis.pttl(keysOf(d1).lease)).to.be.within(1, 30_000);
  });

  it('When a lease is held by an owner judged dead, then it is taken over with a new epoch; a live holder keeps it', async () => {
    const l = leases('json', 60_000);
    const [d1, d2] = [id(), id()];
    await l.acquire(d1, 'ghost');
    await l.acquire(d2, 'alive');
    const [t1, t2] = await l.acquireMany([d1, d2], 'taker', ['ghost']);
    expect(t1).to.deep.equal({ id: d1, owner: 'taker', epoch: 2, takenFrom: 'ghost' });
    expect(t2).to.equal(undefined);
    expect(await l.renew({ id: d1, owner: 'ghost', epoch: 1 })).to.equal('lost');
  });

  it('When a lease is released to a target, then only the target takes it, with the hand-over start', async () => {
    const l = leases('json');
    const d = id();
    const held = (await l.acquire(d, 'giver'))!;
    const before = Date.now();
    expect(await l.release(held, { to: 'target', holdMs: 5000 })).to.equal(true);
    expect(await l.acquire(d, 'bystander')).to.equal(undefined);
    const taken = (await l.acquire(d, 'target'))!;
    expect(taken.epoch).to.equal(3);
    expect(taken.handedOverAt).to.be.within(before - 1000, Date.now() + 1000);
    expect(await redis.exists(keysOf(d).reservation)).to.equal(0);
  });

  it('When members beat a liveness set, then the Redis clock judges them: alive, counted, expired, forgotten, gone on leave', async function () {
    this.timeout(30_000);
    const key = `test:coord:${run}:live`;
    // A TTL and a grace of 2 s: the checks right after a beat have that long to run (quiet: a few
    // ms); the expiries are waited for, and their timing read on the Redis clock.
    const TTL = 2000;
    const FORGET = 2000;
    const set = new LivenessSet(redis, { key, ttlMs: TTL, forgetMs: FORGET });
    const first = await set.beat('a');
    expect(first.expired).to.deep.equal([]);
    await set.beat('b');
    expect(await set.isAlive('a')).to.equal(true);
    expect(await set.isAlive('nobody')).to.equal(false);
    expect(await set.countAlive()).to.equal(2);

    // Only looking (a hung process): b's entry is not written again, and both run out.
    let look!: BeatReply;
    await waitFor(async () => (look = await set.beat('b', false)).expired.length === 2, {
      timeoutMs: 20_000,
      what: 'a and b to expire',
    });
    expect(look.now - first.now, 'not before its TTL (Redis clock)').to.be.at.least(TTL);
    expect(look.expired.sort()).to.deep.equal(['a', 'b']);
    await set.beat('b');
    expect(await set.isAlive('a')).to.equal(false);
    expect(await set.countAlive()).to.equal(1);
    expect((await set.beat('b')).expired).to.deep.equal(['a']);

    // Expired longer than forgetMs: dropped by a beat, not before.
    let dropped!: BeatReply;
    await waitFor(
      async () => {
        dropped = await set.beat('b');
        return (await redis.zscore(key, 'a')) === null;
      },
      { timeoutMs: 20_000, what: "a's entry to be forgotten" },
    );
    expect(dropped.now - first.now, 'not before TTL + forgetMs (Redis clock)').to.be.at.least(TTL + FORGET);
    await set.leave('b');
    expect(await redis.exists(key)).to.equal(0);
  });
});
