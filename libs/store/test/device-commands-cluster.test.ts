import { randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Cluster, Redis } from 'ioredis';
import { keys, type DeviceCommand } from '@mgw/contracts';
import { startRedisCluster, type ClusterHandle } from '@mgw/testing';
import { DeviceCommandClient, DeviceCommandResponder, NOBODY_HOLDS_DEVICE } from '@mgw/store';

const logout = (deviceId: string): DeviceCommand => ({ type: 'logout', deviceId, requestId: randomUUID() });

/**
 * On a cluster PUBLISH reaches every node but counts only the subscribers of the node that took
 * it: whether anyone will answer must come from elsewhere (the device's lease).
 */
describe('device commands on Redis Cluster (three masters with a replica each)', function () {
  this.timeout(60_000);
  let cluster: ClusterHandle;
  let redis: Cluster;
  let client: DeviceCommandClient;
  const opened: (Redis | Cluster)[] = [];
  const failures: unknown[] = [];

  /** A stand-in sender holding `held`, subscribed on the node at `port`; returns what it heard. */
  async function holder(held: string, port: number): Promise<DeviceCommand[]> {
    const heard: DeviceCommand[] = [];
    const subscriber = new Redis({ host: '127.0.0.1', port });
    opened.push(subscriber);
    await new DeviceCommandResponder(subscriber, redis).listen(
      async (cmd, reply) => {
        heard.push(cmd);
        if (cmd.deviceId === held) await reply({ ok: true });
      },
      (err) => failures.push(err),
    );
    return heard;
  }
  const holdLease = (deviceId: string) =>
    redis.set(keys.lease(deviceId), JSON.stringify({ owner: 'sender:test', epoch: 1 }), 'PX', 30_000);
  const port = (role: 'master' | 'replica') => cluster.nodes.find((n) => n.role === role)!.port;
  const freshDevice = () => 'dcc-' + randomBytes(4).toString('hex');

  before(async () => {
    cluster = await startRedisCluster({ replicasPerMaster: 1 });
    redis = new Cluster(cluster.seeds.split(','));
    const blocking = new Cluster(cluster.seeds.split(','));
    opened.push(blocking);
    client = new DeviceCommandClient(redis, blocking);
  });
  afterEach(async () => {
    await Promise.all(opened.splice(1).map((r) => r.quit()));
    expect(failures.splice(0), 'handlers that failed').to.deep.equal([]);
  });
  after(async () => {
    opened.forEach((r) => r.disconnect());
    redis?.disconnect();
    await cluster?.stop();
  });

  it('When the holder listens on a node whose subscribers no PUBLISH counts (a replica), then ask still gets its answer', async () => {
    const deviceId = freshDevice();
    await holdLease(deviceId);
    const heard = await holder(deviceId, port('replica'));
    // The case a count would get wrong: every master counts 0 subscribers.
    expect(await redis.publish(keys.deviceCommands(), 'probe')).to.equal(0);
    expect(await client.ask(logout(deviceId), 5)).to.deep.equal({ ok: true });
    expect(heard.map((c) => c.deviceId)).to.deep.equal([deviceId]);
  });

  it('When nobody holds the lease, then ask says nobody holds the device at once, and publishes nothing', async () => {
    const heard = await holder('dcc-other', port('master'));
    const started = Date.now();
    expect(await client.ask(logout(freshDevice()), 30)).to.equal(NOBODY_HOLDS_DEVICE);
    // "At once": without waiting out its 30 s timeout (a bound load cannot reach): quiet: 10 ms.
    expect(Date.now() - started).to.be.below(10_000);
    // Nothing published: a command asked after it, to a device held, is the only one heard (an
    // order to wait for, not a sleep).
    await holdLease('dcc-other');
    expect(await client.ask(logout('dcc-other'), 30)).to.deep.equal({ ok: true });
    expect(heard.map((c) => c.deviceId)).to.deep.equal(['dcc-other']);
  });

  it('When the lease is held by a process that does not answer, then ask waits out its timeout and returns undefined', async () => {
    const deviceId = freshDevice();
    await holdLease(deviceId);
    const heard = await holder(freshDevice(), port('replica'));
    expect(await client.ask(logout(deviceId), 1)).to.equal(undefined);
    // The test before's command may still be crossing the cluster bus (a PUBLISH reaches the other
    // nodes after its own has answered) and reach this new subscriber: only this test's is counted.
    expect(heard.filter((c) => c.deviceId === deviceId)).to.have.length(1);
  });
});
