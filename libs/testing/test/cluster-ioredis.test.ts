/**
 * Facts about ioredis 5 Cluster clients (and rate-limit-redis 6 on them) that the gateway's
 * Cluster mode relies on.
 */
import { expect } from 'chai';
import type { Options as RateLimitOptions } from 'express-rate-limit';
import { Cluster, Redis } from 'ioredis';
import { RedisStore, type SendCommandClusterDetails } from 'rate-limit-redis';
import { waitFor } from '../src/net.js';
import { startRedisCluster, type ClusterHandle } from '../src/redis-cluster.js';

async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a failure');
}

describe('ioredis Cluster basics', function () {
  this.timeout(30_000);
  let cluster: ClusterHandle;
  let client: Cluster;
  const direct: Redis[] = [];
  const open = (port: number) => (direct.push(new Redis({ port, host: '127.0.0.1' })), direct.at(-1)!);
  /** Until a client is blocked (BLPOP) on the node at `port`, as the node itself reports. */
  const blockedOn = (port: number) => {
    const node = open(port);
    return waitFor(async () => /\bblocked_clients:[1-9]/.test(await node.info('clients')), {
      intervalMs: 10,
      what: `a client blocked on ${port}`,
    });
  };
  /** A key whose master is (or is not) the given port. */
  const keyOn = async (prefix: string, test: (port: number) => boolean) => {
    for (let i = 0; ; i++) if (test(await cluster.masterForKey(`${prefix}${i}`))) return `${prefix}${i}`;
  };

  before(async () => {
    cluster = await startRedisCluster();
    client = new Cluster(cluster.seeds.split(','));
  });
  afterEach(async () => {
    direct.splice(0).forEach((r) => r.disconnect());
    await Promise.all(client.nodes('master').map((n) => n.script('FLUSH')));
    await cluster.flushAll();
  });
  after(async () => {
    client?.disconnect();
    await cluster?.stop();
  });

  it('When a defineCommand script gets keys of one slot, then it runs; keys of two slots get CROSSSLOT', async () => {
    client.defineCommand('setBoth', {
      numberOfKeys: 2,
      lua: 'redis.call("SET", KEYS[1], ARGV[1]); redis.call("SET", KEYS[2], ARGV[1]); return 2',
    });
    const setBoth = (client as unknown as { setBoth(...a: string[]): Promise<number> }).setBoth.bind(client);
    expect(await setBoth('mgw:{dev1}:a', 'mgw:{dev1}:b', 'v')).to.equal(2);
    expect(await setBoth('mgw:{dev1}:a', 'mgw:{dev1}:b', 'v')).to.equal(2);
    expect((await failure(setBoth('mgw:{dev1}:a', 'mgw:{dev2}:b', 'v'))).message).to.match(/^CROSSSLOT/);
  });

  it('When keys are scanned, then scanStream on every master finds all of them, while cluster.scan asks one node only', async () => {
    await Promise.all(Array.from({ length: 60 }, (_, i) => client.set(`mgw:auth:dev${i}:creds`, 'x')));
    const found: string[] = [];
    for (const node of client.nodes('master')) {
      for await (const batch of node.scanStream({ match: 'mgw:auth:*', count: 100 })) found.push(...batch);
    }
    expect(found).to.have.length(60);

    const [, oneNode] = await client.scan('0', 'MATCH', 'mgw:auth:*', 'COUNT', 1000);
    expect(oneNode.length).to.be.above(0).and.below(60);
    expect(new Set(await Promise.all(oneNode.map((k) => cluster.masterForKey(k)))).size).to.equal(1);
  });

  it('When a message is published on one node, then a subscriber connected to another node receives it', async () => {
    const [a, b] = cluster.nodes;
    const subscriber = open(a!.port);
    const received = new Promise((resolve) => subscriber.on('message', (ch, msg) => resolve([ch, msg])));
    await subscriber.subscribe('mgw:events:devices');
    await open(b!.port).publish('mgw:events:devices', 'dev1');
    expect(await received).to.deep.equal(['mgw:events:devices', 'dev1']);

    const clusterSubscriber = client.duplicate();
    const viaCluster = new Promise((resolve) => clusterSubscriber.on('message', (_ch, msg) => resolve(msg)));
    await clusterSubscriber.subscribe('mgw:events:devices');
    await client.publish('mgw:events:devices', 'dev2');
    expect(await viaCluster).to.equal('dev2');
    clusterSubscriber.disconnect();
  });

  it('When BLPOP waits on a hash-tagged key, then a push from elsewhere wakes it; keys of two slots get CROSSSLOT', async () => {
    const blocking = client.duplicate();
    const popped = blocking.blpop('mgw:cmd:{req1}:reply', 5);
    await blockedOn(await cluster.masterForKey('mgw:cmd:{req1}:reply'));
    await client.rpush('mgw:cmd:{req1}:reply', 'done');
    expect(await popped).to.deep.equal(['mgw:cmd:{req1}:reply', 'done']);
    expect((await failure(blocking.blpop('mgw:{a}:q', 'mgw:{b}:q', 1))).message).to.match(/^CROSSSLOT/);
    blocking.disconnect();
  });

  it('When BLPOP blocks on the shared Cluster client, then other commands to that node wait behind it (one connection per node)', async () => {
    const key = 'mgw:cmd:{req2}:reply';
    const home = await cluster.masterForKey(key);
    const neighbour = await keyOn('n', (p) => p === home);
    const elsewhere = await keyOn('e', (p) => p !== home);
    // An order, not a clock: the GET to another node is answered while BLPOP blocks, the one to
    // its node only after a push (on a connection of its own) has woken it.
    const order: string[] = [];
    const note =
      (what: string) =>
      <T>(x: T) => (order.push(what), x);
    const blpop = client.blpop(key, 20).then(note('blpop'));
    await blockedOn(home);
    const sameNode = client.get(neighbour).then(note('same node'));
    await client.get(elsewhere).then(note('other node'));
    await open(home).rpush(key, 'wake');
    await Promise.all([blpop, sameNode]);
    expect(order).to.deep.equal(['other node', 'blpop', 'same node']);
  });

  it('When enableOfflineQueue is false, then a command before the Cluster is ready fails at once', async () => {
    const producer = new Cluster(cluster.seeds.split(','), { enableOfflineQueue: false });
    // "At once": the message is the refusal of a client not ready yet, never a timeout's.
    const err = await failure(producer.get('x'));
    expect(err.message).to.equal("Cluster isn't ready and enableOfflineQueue options is false");
    await new Promise((r) => producer.once('ready', r));
    expect(await producer.get('x')).to.equal(null);
    producer.disconnect();
  });

  it('When EVALSHA goes through cluster.call, then it is routed by its key; SCRIPT LOAD lands on one master only', async () => {
    const script = 'return redis.call("INCR", KEYS[1])';
    const key = 'mgw:rl:send:tok';
    const sha = (await open(await cluster.masterForKey(key)).script('LOAD', script)) as string;
    expect(await client.call('EVALSHA', sha, '1', key)).to.equal(1);
    const stranger = await keyOn('mgw:rl:send:t', (p) => p !== cluster.nodes[0]!.port);
    await Promise.all(client.nodes('master').map((n) => n.script('FLUSH')));
    await open(cluster.nodes[0]!.port).script('LOAD', script);
    expect((await failure(client.call('EVALSHA', sha, '1', stranger))).message).to.match(/^NOSCRIPT/);

    await Promise.all(client.nodes('master').map((n) => n.script('FLUSH')));
    await client.call('SCRIPT', 'LOAD', script);
    const loaded = await Promise.all(client.nodes('master').map((n) => n.script('EXISTS', sha)));
    expect(loaded.flat().sort()).to.deep.equal([0, 0, 1]);
  });

  it("When rate-limit-redis uses today's sendCommand (cluster.call), then an increment on a master without the script fails with NOSCRIPT in some of 20 tries", async () => {
    const store = new RedisStore({
      prefix: 'mgw:rl:send:',
      sendCommand: (command: string, ...args: string[]) => client.call(command, ...args) as Promise<number>,
    });
    await store.init({ windowMs: 60_000 } as RateLimitOptions);
    let failures = 0;
    for (let trial = 0; trial < 20; trial++) {
      await Promise.all(client.nodes('master').map((n) => n.script('FLUSH')));
      store.incrementScriptSha = store.loadIncrementScript();
      const sha = await store.incrementScriptSha;
      const holders = await Promise.all(
        client.nodes('master').map(async (n) => [n.options.port, await n.script('EXISTS', sha)]),
      );
      const holder = holders.find(([, has]) => (has as number[])[0] === 1)![0];
      const token = await keyOn(`mgw:rl:send:t${trial}-`, (p) => p !== holder);
      failures += await store.increment(token.slice('mgw:rl:send:'.length)).then(
        () => 0,
        (err: Error) => (expect(err.message).to.match(/^NOSCRIPT/), 1),
      );
    }
    // Each try fails when the one reload also misses the key's master: 2 chances in 3.
    console.log(`      (${failures} of 20 increments failed with NOSCRIPT)`);
    expect(failures).to.be.above(0);
  });

  it('When sendCommandCluster sends SCRIPT LOAD to every master, then increments succeed on every master', async () => {
    const store = new RedisStore({
      prefix: 'mgw:rl:send:',
      sendCommandCluster: async ({ command: [name, ...args] }: SendCommandClusterDetails) => {
        if (name!.toUpperCase() === 'SCRIPT') {
          const shas = await Promise.all(client.nodes('master').map((n) => n.call(name!, ...args)));
          return shas[0] as string;
        }
        return client.call(name!, ...args) as Promise<number>;
      },
    });
    await store.init({ windowMs: 60_000 } as RateLimitOptions);
    const keys = await Promise.all(
      cluster.nodes.map((n, i) => keyOn(`mgw:rl:send:t${i}-`, (p) => p === n.port)),
    );
    const tokens = keys.map((k) => k.slice('mgw:rl:send:'.length));
    for (const token of tokens) expect((await store.increment(token)).totalHits).to.equal(1);
    expect((await store.increment(tokens[0]!)).totalHits).to.equal(2);
  });
});
