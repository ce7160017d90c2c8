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

  it('When the devices of an owner judged dead are acquired in one batch, then each is taken over on its own node with a new epoch', async () => {
    const devices = Array.from({ length: 12 }, (_, i) => `cl-dead-${i}`);
    const held = (await new LeaseManager(client, 'cl-dead', 60_000).acquireMany(devices)) as Lease[];
    const taker = new LeaseManager(client, 'cl-taker', 5000);
    expect(await taker.acquireMany(devices, ['someone-else'])).to.deep.equal(devices.map(() => undefined));
    const taken = await taker.acquireMany(devices, ['someone-else', 'cl-dead']);
    expect(taken.map((l) => [l?.owner, l?.epoch, l?.takenFrom])).to.deep.equal(
      held.map((l) => ['cl-taker', l.epoch + 1, 'cl-dead']),
    );
  });
});
