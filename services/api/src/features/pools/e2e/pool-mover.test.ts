import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';
import { PoolStore, leaseHolder } from '@mgw/store';
import { waitFor } from '@mgw/testing';
import type { ApiServices } from '../../../api-services.js';
import { PoolMover } from '../pool-mover.js';
import { openUseCaseServices, type UseCaseServices } from '../../../../test/helpers/use-case-services.js';

/**
 * The pool mover's lease (the lease with fencing, one per pool): two API processes' movers on one
 * Redis, each a PoolMover whose rounds the test runs. Its pools hold no list, so a round only
 * looks at them: what is asserted is who looks.
 */
describe('API: the pool mover holds one lease per pool (real Redis)', () => {
  let services: ApiServices;
  let redis: Redis;
  const movers: PoolMover[] = [];
  let poolId: string;
  const lease = () => keys.poolMoverLease(poolId);
  const holder = async () => leaseHolder('token', (await redis.get(lease()))!);

  let opened: UseCaseServices;
  before(async () => {
    opened = await openUseCaseServices('pool-mover-test');
    ({ services, redis } = opened);
  });
  beforeEach(async () => {
    poolId = `p${randomBytes(4).toString('hex')}`;
    const devices = [`t-${randomBytes(5).toString('hex')}`, `t-${randomBytes(5).toString('hex')}`];
    expect(await new PoolStore(redis).create({ id: poolId, name: 'lease test', devices })).to.not.equal(
      'exists',
    );
  });
  afterEach(async () => {
    await Promise.all(movers.splice(0).map((m) => m.stop()));
    await new PoolStore(redis).delete(poolId);
  });
  after(() => opened.close());

  /** One API process's mover (a 1 s interval: its lease lasts the 10 s floor). */
  const mover = () => {
    const m = new PoolMover(services, { intervalMs: 1000, minHealth: 50 });
    movers.push(m);
    return m;
  };

  it('When two API processes run their rounds, then one takes the pool’s lease and looks at the pool; its next rounds renew the lease (same epoch) and the other passes the pool by', async () => {
    const [a, b] = [mover(), mover()];
    expect(await a.round()).to.include(poolId);
    expect(await b.round()).to.not.include(poolId);
    const taken = await holder();
    expect(await redis.pttl(lease())).to.be.within(9_000, 10_000);
    // Two seconds left: the holder's next round renews it to the whole TTL, at the same epoch.
    await redis.pexpire(lease(), 2000);
    expect(await a.round()).to.include(poolId);
    expect(await redis.pttl(lease())).to.be.above(9_000);
    expect(await holder()).to.deep.equal(taken);
    expect(await b.round()).to.not.include(poolId);
    expect(await holder()).to.deep.equal(taken);
  });

  it('When the holder dies, then its lease lapses after its TTL and the other takes the pool; the old holder, back, finds the lease lost and leaves the new one alone', async () => {
    const [a, b] = [mover(), mover()];
    expect(await a.round()).to.include(poolId);
    const first = await holder();
    // A dead process renews nothing: its lease lapses at the end of its TTL (brought forward here).
    expect(await redis.pttl(lease())).to.be.within(1, 10_000);
    await redis.pexpire(lease(), 1);
    await waitFor(async () => (await redis.exists(lease())) === 0, { intervalMs: 5, what: 'the lapse' });
    expect(await b.round()).to.include(poolId);
    const second = await holder();
    expect(second.owner).to.not.equal(first.owner);
    expect(second.epoch).to.equal(first.epoch + 1);
    // The first was only paused: its renewal finds the lease someone else's, and changes nothing.
    await redis.pexpire(lease(), 5000);
    expect(await a.round()).to.not.include(poolId);
    expect(await holder()).to.deep.equal(second);
    expect(await redis.pttl(lease())).to.be.within(1, 5000);
  });

  it('When the holder stops, then it gives the pool’s lease back and the other takes it at its next round', async () => {
    const [a, b] = [mover(), mover()];
    expect(await a.round()).to.include(poolId);
    const first = await holder();
    await a.stop();
    expect(await redis.exists(lease())).to.equal(0);
    expect(await b.round()).to.include(poolId);
    expect((await holder()).owner).to.not.equal(first.owner);
  });
});
