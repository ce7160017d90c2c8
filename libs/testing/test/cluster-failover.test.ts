/**
 * What ioredis Cluster clients see when a master dies: with a replica (failover), and without
 * (the cluster goes down). cluster-node-timeout is the harness default, 2000 ms.
 */
import { expect } from 'chai';
import { Cluster, Redis, type ClusterOptions } from 'ioredis';
import { waitFor } from '../src/net.js';
import { startRedisCluster, type ClusterHandle } from '../src/redis-cluster.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Error messages without the parts that change from run to run (slot numbers, ports). */
const shape = (err: Error) => err.message.replace(/MOVED \d+ [\d.]+:\d+/, 'MOVED <slot> <node>');

async function keyOn(cluster: ClusterHandle, prefix: string, port: number): Promise<string> {
  for (let i = 0; ; i++)
    if ((await cluster.masterForKey(`${prefix}{${i}}`)) === port) return `${prefix}{${i}}`;
}

/** A Cluster client on the seeds, once ready (a producer without offline queue refuses earlier). */
async function connect(cluster: ClusterHandle, options: ClusterOptions = {}): Promise<Cluster> {
  const client = new Cluster(cluster.seeds.split(','), options);
  client.on('error', () => undefined);
  await new Promise((resolve) => client.once('ready', resolve));
  return client;
}

/**
 * How long the failover and the cluster's recovery may take before a wait for them fails: 10 x
 * what they take on a quiet machine (about 4 s after the kill, cluster-node-timeout 2 s included).
 */
const FAILOVER_WAIT_MS = 40_000;

/** Retries SET every 50 ms until it succeeds; returns when it did and every error shape seen. */
async function writeUntilOk(client: Cluster, key: string, since: number) {
  const errors = new Set<string>();
  while (Date.now() - since < FAILOVER_WAIT_MS) {
    const err = await client.set(key, 'v').then(
      () => undefined,
      (e: Error) => e,
    );
    if (!err) return { okAfterMs: Date.now() - since, errors: [...errors] };
    errors.add(shape(err));
    await sleep(50);
  }
  throw new Error(
    `writes not ok again ${FAILOVER_WAIT_MS} ms after the kill; errors: ${[...errors].join('; ')}`,
  );
}

describe('Redis Cluster failover, as ioredis clients see it', function () {
  this.timeout(2 * FAILOVER_WAIT_MS);
  let cluster: ClusterHandle;
  const clients: (Cluster | Redis)[] = [];
  // A direct connection to a node that gets killed would log every failed reconnect.
  const track = <T extends Cluster | Redis>(c: T): T => (clients.push(c.on('error', () => undefined)), c);

  before(async () => {
    cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1 });
  });
  after(async () => {
    clients.forEach((c) => c.disconnect());
    await cluster?.stop();
  });

  it('When a script is loaded on a master, then its replica does not have it (a promoted replica starts without the scripts of its master)', async () => {
    const master = cluster.nodes.find((n) => n.role === 'master')!.port;
    const [replica] = await cluster.replicasOf(master);
    const sha = (await track(new Redis(master)).script('LOAD', 'return 1')) as string;
    expect(await track(new Redis(replica!)).script('EXISTS', sha)).to.deep.equal([0]);
  });

  it('When a master is SIGKILLed, then writes to its slots fail ("Too many Cluster redirections") or wait for a few seconds, with or without the offline queue, while every other master answers CLUSTERDOWN for a moment', async () => {
    const victim = cluster.nodes.find((n) => n.role === 'master')!.port;
    const bystander = cluster.nodes.find((n) => n.role === 'master' && n.port !== victim)!.port;
    const key = await keyOn(cluster, 'mgw:k', victim);
    const producer = track(await connect(cluster, { enableOfflineQueue: false }));
    const queued = track(await connect(cluster));
    const pumpClient = track(await connect(cluster));
    const otherMaster = track(new Redis(bystander));
    await Promise.all([producer, queued, pumpClient].map((c) => c.set(key, 'warm')));

    // Sequential writes to the victim's slot. How many acknowledged ones a plain SIGKILL loses is
    // logged, not asserted: on loopback the window is tiny. The next test forces a loss.
    const acked: string[] = [];
    let pumping = true;
    const pump = (async () => {
      for (let n = 0; pumping; n++) {
        const k = `${key}:w${n}`;
        await pumpClient.set(k, '1').then(
          () => acked.push(k),
          () => sleep(50),
        );
      }
    })();
    await sleep(200);

    const killedAt = Date.now();
    await cluster.killNode(victim);
    const [withoutQueue, withQueue, clusterDown] = await Promise.all([
      writeUntilOk(producer, key, killedAt),
      writeUntilOk(queued, key, killedAt),
      clusterDownWindow(otherMaster, await keyOn(cluster, 'mgw:o', bystander), killedAt),
    ]);
    const { newMasterPort, sinceKillMs } = await cluster.waitForFailover(victim);
    pumping = false;
    await pump;
    const present = await Promise.all(acked.map((k) => producer.exists(k)));
    const lost = present.filter((p) => !p).length;
    console.log(
      `      (promoted ${newMasterPort}: cluster ok ${sinceKillMs} ms after the kill; writes ok again after ` +
        `${withoutQueue.okAfterMs} ms without / ${withQueue.okAfterMs} ms with offline queue; ` +
        `other masters answered CLUSTERDOWN from ${clusterDown.from} to ${clusterDown.to} ms; ` +
        `${lost} of ${acked.length} acknowledged writes lost)`,
    );

    for (const seen of [withoutQueue, withQueue]) {
      // Not before cluster-node-timeout (2 s); the wait itself bounds it (FAILOVER_WAIT_MS).
      expect(seen.okAfterMs).to.be.at.least(2000);
      // No write succeeds for 2 s (above). ioredis gives up on a command after 16 redirections
      // 100 ms apart (~1.6 s), less than a failover takes, so the caller mostly sees errors; on a
      // loaded machine each redirection can take longer (a refused connect, a slots refresh) and
      // one command outlasts the failover without an error (seen in CI): errors are not required,
      // but any error is one of these.
      for (const e of seen.errors) {
        expect(e).to.match(
          /^Too many Cluster redirections\. Last error: (Error: Connection is closed\.|ReplyError: MOVED <slot> <node>|ReplyError: CLUSTERDOWN The cluster is down)$/,
        );
      }
    }
    // Not before cluster-node-timeout: only then is the master failed and its slots uncovered.
    expect(clusterDown.from, 'CLUSTERDOWN seen').to.be.above(1500);
    expect(clusterDown.to).to.be.above(clusterDown.from);
  });

  it('When the link to the replica is cut while the master acknowledges a write, then WAIT 1 says 0 and the write is gone after the failover; a write WAIT confirmed survives', async () => {
    const victim = cluster.nodes.find((n) => n.role === 'master' && n.alive)!.port;
    const [replica] = await cluster.replicasOf(victim);
    const master = track(new Redis(victim));
    const safe = await keyOn(cluster, 'mgw:safe', victim);
    const risky = await keyOn(cluster, 'mgw:risky', victim);

    await master.set(safe, 'v');
    expect(await master.wait(1, 1000)).to.equal(1);
    // Paused, the replica cannot reconnect before the master dies; a pause alone is not enough:
    // what the master wrote is in the replica's socket buffer and is applied after the resume.
    cluster.pauseNode(replica!);
    expect(await master.client('KILL', 'TYPE', 'replica')).to.equal(1);
    expect(await master.set(risky, 'v')).to.equal('OK');
    expect(await master.wait(1, 200)).to.equal(0);
    await cluster.killNode(victim);
    cluster.resumeNode(replica!);
    expect((await cluster.waitForFailover(victim)).newMasterPort).to.equal(replica);

    const client = track(await connect(cluster));
    expect(await client.get(safe)).to.equal('v');
    expect(await client.get(risky)).to.equal(null);
  });
});

/** Polls a master directly (no client retries) until CLUSTERDOWN has come and gone. */
async function clusterDownWindow(node: Redis, key: string, since: number) {
  let from = 0;
  while (Date.now() - since < FAILOVER_WAIT_MS) {
    const down = await node.set(key, 'v').then(
      () => false,
      (err: Error) => err.message.startsWith('CLUSTERDOWN'),
    );
    if (down && !from) from = Date.now() - since;
    if (!down && from) return { from, to: Date.now() - since };
    await sleep(20);
  }
  return { from, to: 0 };
}

describe('Redis Cluster without replicas, when nodes die', function () {
  this.timeout(2 * FAILOVER_WAIT_MS);
  let cluster: ClusterHandle;
  let producer: Cluster;
  let queued: Cluster;

  before(async () => {
    cluster = await startRedisCluster({ masters: 3 });
    producer = await connect(cluster, { enableOfflineQueue: false });
    queued = await connect(cluster, { redisOptions: { maxRetriesPerRequest: 1 } });
  });
  after(async () => {
    [producer, queued].forEach((c) => c?.disconnect());
    await cluster?.stop();
  });

  it('When one master dies, then a few seconds later every slot answers CLUSTERDOWN (the whole cluster is down)', async () => {
    const [victim, survivor] = cluster.nodes.map((n) => n.port);
    const key = await keyOn(cluster, 'mgw:s', survivor!);
    const direct = new Redis(survivor!);
    await cluster.killNode(victim!);
    const killedAt = Date.now();
    expect(await producer.set(key, 'v')).to.equal('OK');
    let from = 0;
    // Quiet: 2.8 s after the kill; the wait is FAILOVER_WAIT_MS.
    while (!from && Date.now() - killedAt < FAILOVER_WAIT_MS) {
      const down = await direct.set(key, 'v').then(
        () => false,
        (e: Error) => e.message === 'CLUSTERDOWN The cluster is down',
      );
      if (down) from = Date.now() - killedAt;
      else await sleep(20);
    }
    direct.disconnect();
    console.log(`      (the surviving masters answered CLUSTERDOWN ${from} ms after the kill)`);
    expect(from).to.be.above(1500);

    const started = Date.now();
    const err = await producer.set(key, 'v').then(
      () => undefined,
      (e: Error) => e,
    );
    // ioredis retries CLUSTERDOWN on a random node (the dead one included), 16 times (maxRedirections),
    // 100 ms apart (retryDelayOnClusterDown), so the last error is either.
    expect(err?.message).to.match(
      /^Too many Cluster redirections\. Last error: (ReplyError: CLUSTERDOWN The cluster is down|Error: Connection is closed\.)$/,
    );
    // At least those 16 delays, and then it gives up rather than hang: quiet: 1700 ms.
    expect(Date.now() - started).to.be.within(1400, 17_000);
  });

  it('When every node is down, then without the offline queue a command fails at once; with it the command hangs, whatever maxRetriesPerRequest says', async () => {
    await cluster.stop();
    // Both clients have seen the cluster go (their own events, not a sleep).
    // Both clients' node connections have seen the nodes go (their own events, not a sleep).
    await waitFor(() => [producer, queued].every((c) => c.nodes().every((n) => n.status !== 'ready')), {
      intervalMs: 20,
      what: 'the clients to lose every node',
    });

    // "At once": the message is the refusal of a client that is not ready, never a timeout's.
    const fast = await producer.get('x').then(
      () => undefined,
      (e: Error) => e,
    );
    expect(fast?.message).to.equal("Cluster isn't ready and enableOfflineQueue options is false");
    // Still pending after more reconnection attempts than its maxRetriesPerRequest (1) allows.
    let settled: string | undefined;
    void queued.get('x').then(
      () => (settled = 'answered'),
      () => (settled = 'failed'),
    );
    let attempts = 0;
    queued.on('reconnecting', () => attempts++);
    await waitFor(() => attempts >= 3 || settled !== undefined, {
      intervalMs: 20,
      what: 'three reconnection attempts',
    });
    expect(settled ?? 'pending').to.equal('pending');
  });
});
