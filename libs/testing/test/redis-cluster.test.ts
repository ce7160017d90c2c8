import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { keySlot, startRedisCluster, type ClusterHandle } from '../src/redis-cluster.js';

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(what: string, check: () => boolean, timeoutMs = 5000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !check(); await new Promise((r) => setTimeout(r, 50))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}

/** Runs redis-cluster-orphan.ts; returns what it printed and the child, still running or not. */
async function orphan(mode: 'exit' | 'hang') {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(import.meta.dirname, 'fixtures/redis-cluster-orphan.ts'), mode],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const exited = new Promise((r) => child.once('exit', r));
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  await until('the orphan cluster to start', () => out.includes('\n'), 20_000);
  return { child, exited, started: JSON.parse(out) as { pids: number[]; dirs: string[] } };
}

const direct = (port: number) => new Redis({ host: '127.0.0.1', port, lazyConnect: true });

describe('redis-cluster harness', function () {
  this.timeout(30_000);
  let cluster: ClusterHandle;

  before(async () => {
    cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1 });
    console.log(`      (3 masters + 3 replicas started in ${cluster.startMs} ms)`);
  });
  after(() => cluster?.stop());

  it('When a cluster of 3 masters with 1 replica each starts, then every node is up, in its role, and in the seeds', async () => {
    expect(cluster.nodes.filter((n) => n.role === 'master')).to.have.length(3);
    expect(cluster.nodes.filter((n) => n.role === 'replica')).to.have.length(3);
    expect(cluster.seeds.split(',')).to.deep.equal(cluster.nodes.map((n) => `127.0.0.1:${n.port}`));
    for (const node of cluster.nodes) {
      const redis = direct(node.port);
      const info = (await redis.cluster('INFO')) as string;
      const replication = await redis.info('replication');
      redis.disconnect();
      expect(info).to.include('cluster_state:ok').and.include('cluster_slots_ok:16384');
      expect(replication).to.include(node.role === 'master' ? 'role:master' : 'master_link_status:up');
      expect(isRunning(node.pid)).to.equal(true);
    }
  });

  it('When keys are written through an ioredis Cluster on the seeds, then each lands on masterForKey(key), whose slot keySlot computes like Redis', async () => {
    const client = new Cluster(cluster.seeds.split(','));
    const keys = [
      'mgw:{dev1}:msg:1',
      'mgw:bull:send-{dev1}:wait',
      'plain-key',
      'a{}b',
      '{}{x}',
      'mgw:{dev2}:x',
    ];
    for (const key of keys) await client.set(key, 'v');
    for (const key of keys) {
      const owner = direct(await cluster.masterForKey(key));
      expect(await owner.cluster('KEYSLOT', key)).to.equal(keySlot(key));
      expect(await owner.get(key)).to.equal('v');
      owner.disconnect();
    }
    await client.quit();
  });

  it('When flushAll runs, then no master and no replica holds a key', async () => {
    const client = new Cluster(cluster.seeds.split(','));
    await Promise.all(Array.from({ length: 30 }, (_, i) => client.set(`k${i}`, 'v')));
    await client.quit();
    await cluster.flushAll();
    for (const node of cluster.nodes) {
      const redis = direct(node.port);
      expect(await redis.dbsize(), `keys on ${node.port}`).to.equal(0);
      redis.disconnect();
    }
  });

  it('When a master is SIGKILLed, then waitForFailover returns its promoted replica, which serves the slot, and the roles follow', async () => {
    const key = 'mgw:{failover}:k';
    const oldMaster = await cluster.masterForKey(key);
    const [replica] = await cluster.replicasOf(oldMaster);

    await cluster.killNode(oldMaster);
    const { newMasterPort, sinceKillMs } = await cluster.waitForFailover(oldMaster);
    console.log(`      (failover done ${sinceKillMs} ms after the kill)`);

    expect(newMasterPort).to.equal(replica);
    expect(await cluster.masterForKey(key)).to.equal(replica);
    expect(cluster.nodes.find((n) => n.port === replica)?.role).to.equal('master');
    expect(cluster.nodes.find((n) => n.port === oldMaster)?.alive).to.equal(false);
    expect(isRunning(cluster.nodes.find((n) => n.port === oldMaster)!.pid)).to.equal(false);
  });

  it('When stop runs (after a node was killed), then no node process and no node dir is left', async () => {
    const pids = cluster.nodes.map((n) => n.pid);
    await cluster.stop();
    expect(pids.filter(isRunning)).to.deep.equal([]);
    const leftovers = readdirSync(os.tmpdir()).filter((d) =>
      cluster.nodes.some((n) => d.startsWith(`mgw-cluster-${n.port}-`)),
    );
    expect(leftovers).to.deep.equal([]);
  });

  it('When the test process exits without stop, then its nodes are killed and their dirs removed', async () => {
    const { exited, started } = await orphan('exit');
    await exited;
    await until('the exit hook to kill the nodes', () => started.pids.every((p) => !isRunning(p)));
    expect(started.dirs.filter((d) => existsSync(path.join(os.tmpdir(), d)))).to.deep.equal([]);
  });

  it('When the test process is SIGKILLed, then the watchdogs kill its nodes and remove their dirs', async () => {
    const { child, exited, started } = await orphan('hang');
    expect(started.pids.every(isRunning)).to.equal(true);
    child.kill('SIGKILL');
    await exited;
    await until('the watchdogs to kill the nodes', () => started.pids.every((p) => !isRunning(p)));
    await until('the watchdogs to remove the dirs', () =>
      started.dirs.every((d) => !existsSync(path.join(os.tmpdir(), d))),
    );
  });
});
