import { expect } from 'chai';
import { Cluster } from 'ioredis';
import { keys } from '@mgw/contracts';
import { startRedisCluster, type ClusterHandle } from '@mgw/testing';
import { FencedLeases, IntervalLock, leaseKeysBeside } from '@mgw/store';

/**
 * The lease scripts take the lease, its epoch counter and its reservation in one call: on a
 * cluster all three must be in one slot, for the global lock keys (no hash tag) as for a pool's.
 */
describe('store: interval locks and the pool mover lease on Redis Cluster (three masters)', function () {
  this.timeout(60_000);
  let cluster: ClusterHandle;
  let client: Cluster;

  before(async () => {
    cluster = await startRedisCluster();
    client = new Cluster(cluster.seeds.split(','));
  });
  after(async () => {
    client?.disconnect();
    await cluster?.stop();
  });

  it('When the event log trim and the media sweep take their locks, then one process runs each, renewing it, and the other skips', async () => {
    for (const key of [keys.eventLogTrimLock(), keys.mediaSweepLock()]) {
      const a = new IntervalLock(client, { key, intervalMs: 2000, owner: 'a' });
      const b = new IntervalLock(client, { key, intervalMs: 2000, owner: 'b' });
      // 1.8 s TTL renewed every 0.6 s: a run of 2 s outlasts the take, so only the renewals hold
      // it; a renewal may be 1.2 s late on a loaded host (10 x more than it takes) and still hold.
      const ran = await a.run(async (lost) => {
        await new Promise((r) => setTimeout(r, 2000));
        expect(await b.run(() => Promise.resolve('b'))).to.equal(undefined);
        return !lost.aborted;
      });
      expect(ran, key).to.equal(true);
      expect(await client.get(key)).to.equal('a:1');
      expect(await client.get(leaseKeysBeside(key).fence)).to.equal('1');
    }
  });

  it("When two API processes hold a pool's mover lease in turn, then it is taken, renewed and given back on the pool's slot", async () => {
    const leases = new FencedLeases(client, {
      keys: (poolId) => leaseKeysBeside(keys.poolMoverLease(poolId)),
      form: 'token',
      ttlMs: 10_000,
    });
    const lease = (owner: string) => leases.acquire('p1', owner);
    const first = (await lease('api-1'))!;
    expect(await lease('api-2')).to.equal(undefined);
    expect(await leases.extend(first)).to.equal('renewed');
    expect(await leases.release(first)).to.equal(true);
    const second = (await lease('api-2'))!;
    expect(second.epoch).to.equal(3);
    expect(await leases.extend(first)).to.equal('lost');
  });
});
