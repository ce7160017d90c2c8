import { expect } from 'chai';
import { Cluster } from 'ioredis';
import { keys } from '@mgw/contracts';
import { startRedisCluster, type ClusterHandle } from '@mgw/testing';
import { LeaseManager, renewLeases, type Lease } from '../src/index.js';

/** A pipeline must stay on one node of a cluster: the batched lease scripts group by node. */
describe('messenger: batched lease scripts on Redis Cluster (three masters)', function () {
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

  it('When leases of devices on every master are acquired and renewed in one batch, then each runs on its own node and all succeed', async () => {
    const devices = Array.from({ length: 30 }, (_, i) => `cl-dev-${i}`);
    const masters = new Set(await Promise.all(devices.map((d) => cluster.masterForKey(keys.lease(d)))));
    expect(masters.size, 'the devices live on every master').to.equal(3);
    const leases = new LeaseManager(client, 'cl', 5000);
    const held = await leases.acquireMany(devices);
    expect(held.every(Boolean)).to.equal(true);
    expect(await leases.acquireMany(devices)).to.deep.equal(devices.map(() => undefined));
    const outcomes = await renewLeases(client, held as Lease[], 5000);
    expect(outcomes).to.deep.equal(devices.map(() => 'renewed'));
  });
});
