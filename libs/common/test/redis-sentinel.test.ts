import { expect } from 'chai';
import { Redis } from 'ioredis';
import { startRedisSentinel, waitFor, type SentinelHandle } from '@mgw/testing';
import {
  closeRedis,
  ConfigError,
  createRedis,
  redisConfig,
  redisEnv,
  sentinelOptions,
  validateEnv,
  type RedisClient,
  type RedisConfig,
} from '../src/index.js';

describe('common: Redis behind Sentinel (REDIS_SENTINELS)', function () {
  this.timeout(90_000);

  it('When REDIS_SENTINELS names sentinels, then the config selects them, the master name and their password; a bad value stops the start naming the variable', () => {
    const e = validateEnv([redisEnv], {
      REDIS_SENTINELS: ' sentinel-0:26379, 10.0.0.2:26380 ',
      REDIS_SENTINEL_PASSWORD: 'spw',
      REDIS_URL: 'redis://app:pw@ignored:6379/2',
    });
    expect(redisConfig(e)).to.deep.equal({
      url: 'redis://app:pw@ignored:6379/2',
      commandTimeoutMs: 5000,
      sentinel: {
        sentinels: [
          { host: 'sentinel-0', port: 26379 },
          { host: '10.0.0.2', port: 26380 },
        ],
        name: 'mymaster',
        password: 'spw',
      },
    });
    expect(redisConfig(validateEnv([redisEnv], { REDIS_SENTINELS: '' })).sentinel).to.equal(undefined);
    for (const bad of ['sentinel-0', 'a:1;b:2', 'a:b', 'a:1,']) {
      expect(() => validateEnv([redisEnv], { REDIS_SENTINELS: bad }), bad).to.throw(
        ConfigError,
        /REDIS_SENTINELS: must be comma-separated host:port sentinels/,
      );
    }
    expect(() => validateEnv([redisEnv], { REDIS_SENTINEL_MASTER: 'my master' })).to.throw(
      ConfigError,
      /REDIS_SENTINEL_MASTER/,
    );
    expect(() => redisConfig(validateEnv([redisEnv], { REDIS_SENTINELS: 'h:0' }))).to.throw(
      ConfigError,
      /REDIS_SENTINELS: h:0 has no valid port/,
    );
    expect(() =>
      redisConfig(validateEnv([redisEnv], { REDIS_SENTINELS: 'a:26379', REDIS_CLUSTER_NODES: 'b:7000' })),
    ).to.throw(ConfigError, /REDIS_SENTINELS: set either REDIS_CLUSTER_NODES or REDIS_SENTINELS/);
  });

  it('When REDIS_URL is rediss://, then the sentinels and the data nodes are both reached over TLS', () => {
    const sentinel = { sentinels: [{ host: 's', port: 26379 }], name: 'm' };
    expect(sentinelOptions(sentinel, 'rediss://s:6379')).to.include({ enableTLSForSentinelMode: true });
    expect(sentinelOptions(sentinel, 'rediss://s:6379').sentinelTLS).to.deep.equal({});
    expect(sentinelOptions(sentinel, 'redis://s:6379')).to.not.have.property('enableTLSForSentinelMode');
  });

  describe('on a real master, replica and three sentinels', () => {
    let kit: SentinelHandle;
    let config: RedisConfig;
    const clients: RedisClient[] = [];
    /** The port of the server a client is connected to now. */
    const servedBy = (c: RedisClient) =>
      (c as unknown as { stream?: { remotePort?: number } }).stream?.remotePort;

    before(async () => {
      // Three data nodes: a master and two replicas, for three failovers.
      kit = await startRedisSentinel({ replicas: 2 });
      config = redisConfig(
        validateEnv([redisEnv], {
          REDIS_SENTINELS: kit.sentinels,
          REDIS_SENTINEL_PASSWORD: kit.sentinelPassword,
          // Nothing listens at this host and port: only the sentinels lead to the master.
          REDIS_URL: `redis://:${kit.password}@127.0.0.1:1/0`,
        }),
      );
      for (const role of ['producer', 'worker', 'subscriber'] as const) {
        clients.push(createRedis(config, role, `sentinel-test-${role}`));
      }
      // BullMQ duplicates the connection it is given for its blocking reads.
      clients.push((clients[1] as Redis).duplicate());
    });
    after(async () => {
      await closeRedis(...clients);
      await kit?.stop();
    });

    /** Writes on every client until each one has written to `port`; none may end for good. */
    async function everyClientWritesTo(port: number, what: string) {
      await waitFor(
        async () => {
          const done = await Promise.all(
            clients.map(async (c) => {
              expect(c.status, 'a client ended for good').to.not.equal('end');
              const ok = await c.incr('sentinel-test:n').then(
                () => true,
                () => false,
              );
              return ok && servedBy(c) === port;
            }),
          );
          return done.every(Boolean);
        },
        { timeoutMs: 30_000, intervalMs: 100, what },
      );
    }

    it('When the sentinels fail the master over (SENTINEL FAILOVER), then every client writes to the new master within seconds, long before the old one is demoted', async () => {
      const old = await kit.masterPort();
      await everyClientWritesTo(old, 'the clients on the master');
      const from = Date.now();
      await kit.failover();
      let newPort = old;
      await waitFor(async () => (newPort = await kit.masterPort().catch(() => old)) !== old, {
        timeoutMs: 20_000,
        what: 'the sentinels to name a new master',
      });
      await everyClientWritesTo(newPort, 'the clients on the new master');
      // Sentinel demotes the old master only some 8–10 s after the switch; until then it still takes
      // writes. The clients left it at +switch-master, not when it was demoted.
      const oldNode = new Redis({ port: old, password: kit.password, lazyConnect: true });
      oldNode.on('error', () => undefined);
      const replication = await oldNode.info('replication').finally(() => oldNode.disconnect());
      console.log(`      (every client on the new master ${Date.now() - from} ms after SENTINEL FAILOVER)`);
      expect(replication, 'the old master, not demoted yet').to.include('role:master');
      await kit.waitForNewMaster(old);
    });

    it('When the sentinel the clients ask first hangs (SIGSTOP) and the master is killed, then every client asks the others and reaches the promoted replica', async () => {
      const old = await kit.masterPort();
      kit.pauseSentinel(0);
      try {
        await kit.killNode(old);
        const { port } = await kit.waitForNewMaster(old);
        await everyClientWritesTo(port, 'the clients on the promoted replica');
      } finally {
        kit.resumeSentinel(0);
      }
    });

    it('When the master is killed (SIGKILL) and a replica promoted, then every client reconnects to it instead of ending', async () => {
      const old = await kit.masterPort();
      await kit.killNode(old);
      // The clients stay idle meanwhile: they reconnect on their own, not because a command waits.
      const { port } = await kit.waitForNewMaster(old);
      await everyClientWritesTo(port, 'the clients on the promoted replica');
    });
  });
});
