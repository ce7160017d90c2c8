/**
 * The Redis a `Stack` runs on: a database of the shared Redis (`REDIS_URL`, or the fixtures'
 * private server), a private `redis-server` of its own, a local Redis Cluster or a local Redis
 * Sentinel setup — with the variables that point the services at it and the test's own client.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { createRedis, redisConfig, redisEnv as commonRedisEnv, validateEnv } from '@mgw/common';
import { startRedisCluster, type ClusterHandle, type RedisClusterOptions } from './redis-cluster.js';
import { startRedisSentinel, type RedisSentinelOptions, type SentinelHandle } from './redis-sentinel.js';
import { startRedisServer, type RedisServerHandle } from './redis-server.js';

export interface StackRedisOptions {
  /** A `redis-server` of the stack's own (AOF, fsync always), which a test may kill and restart. */
  privateRedis?: boolean;
  /**
   * A Redis Cluster of the stack's own (3 masters; add replicas for a failover test): every
   * service and the token CLI get `REDIS_CLUSTER_NODES`, and `stack.cluster` can kill nodes.
   */
  redisCluster?: RedisClusterOptions | true;
  /**
   * A Redis Sentinel setup of the stack's own (a master, a replica, three sentinels): every
   * service and the token CLI get `REDIS_SENTINELS` (and a `REDIS_URL` whose host leads nowhere),
   * and `stack.sentinel` can fail the master over or kill it.
   */
  redisSentinel?: RedisSentinelOptions | true;
  /**
   * A throw-away `redis-server` of the stack's own (nothing on disk; stopped with the stack, or
   * once this process is gone however it ended): no other stack of this process shares its
   * pub/sub channels, as a stack that outlives a suite must not (`useSharedStack`).
   */
  ownRedis?: boolean;
}

export interface StackRedis {
  /** The test's own client, connected as the services are. */
  client: Redis | Cluster;
  /** The services' `REDIS_URL` ('' on a Cluster or Sentinel setup). */
  url: string;
  /** The variables that point the services and the CLIs at it. */
  env: Record<string, string>;
  cluster?: ClusterHandle;
  sentinel?: SentinelHandle;
  /** The private server, when there is one (`kill`/`restart` act on it). */
  server?: RedisServerHandle;
  /** Crashes the private server (SIGKILL); its data stays on disk for `restart`. */
  kill(): Promise<void>;
  /** Starts the private server again on the same port, from its AOF. */
  restart(): Promise<void>;
  /** Disconnects the client and stops what was started for the stack. */
  stop(): Promise<void>;
}

/** Every acknowledged write is on disk before the reply: a crash then loses nothing. */
const PRIVATE_REDIS_ARGS = ['--appendfsync', 'always'];

let nextDb = 1;

export async function startStackRedis(opts: StackRedisOptions): Promise<StackRedis> {
  if (opts.redisCluster) return onCluster(opts.redisCluster === true ? {} : opts.redisCluster);
  if (opts.redisSentinel) return onSentinel(opts.redisSentinel === true ? {} : opts.redisSentinel);
  let own: { server: RedisServerHandle; dataDir: string } | undefined;
  let throwAway: RedisServerHandle | undefined;
  if (opts.privateRedis) {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mgw-stack-redis-'));
    own = { dataDir, server: await startRedisServer({ dataDir, args: PRIVATE_REDIS_ARGS }) };
  } else if (opts.ownRedis) {
    throwAway = await startRedisServer({ stopWithParent: true });
  }
  const server = own?.server ?? throwAway;
  const base = new URL(server?.url ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  base.pathname = server ? '/0' : `/${nextDb}`;
  if (!server) nextDb = (nextDb % 15) + 1;
  const client = new Redis(base.toString());
  // A test may take Redis away on purpose (privateRedis): reconnect quietly.
  client.on('error', () => undefined);
  await client.flushdb();
  const needOwn = (what: string) => {
    if (!own) throw new Error(`${what} needs a stack started with privateRedis`);
    return own;
  };
  return {
    client,
    url: base.toString(),
    env: { REDIS_URL: base.toString() },
    get server() {
      return own?.server ?? throwAway;
    },
    kill: async () => needOwn('killRedis').server.kill(),
    restart: async () => {
      const { dataDir, server } = needOwn('restartRedis');
      own = {
        dataDir,
        server: await startRedisServer({ port: server.port, dataDir, args: PRIVATE_REDIS_ARGS }),
      };
    },
    stop: async () => {
      client.disconnect();
      await throwAway?.stop();
      if (own) {
        await own.server.stop();
        await rm(own.dataDir, { recursive: true, force: true });
      }
    },
  };
}

const notPrivate = async () => {
  throw new Error('killRedis and restartRedis need a stack started with privateRedis');
};

async function onCluster(options: RedisClusterOptions): Promise<StackRedis> {
  const cluster = await startRedisCluster(options);
  const client = new Cluster(cluster.seeds.split(','));
  // A test may kill a master on purpose: reconnect quietly.
  client.on('error', () => undefined);
  return {
    client,
    url: '',
    env: { REDIS_CLUSTER_NODES: cluster.seeds },
    cluster,
    kill: notPrivate,
    restart: notPrivate,
    stop: async () => {
      client.disconnect();
      await cluster.stop();
    },
  };
}

async function onSentinel(options: RedisSentinelOptions): Promise<StackRedis> {
  const kit = await startRedisSentinel(options);
  const env = {
    REDIS_SENTINELS: kit.sentinels,
    REDIS_SENTINEL_MASTER: kit.name,
    REDIS_SENTINEL_PASSWORD: kit.sentinelPassword,
    REDIS_URL: `redis://:${kit.password}@127.0.0.1:1/0`, // the data nodes' password; no server there
  };
  // The test's own client connects as the services do, and follows the failovers like them.
  const client = createRedis(redisConfig(validateEnv([commonRedisEnv], env)), 'worker', 'e2e');
  return {
    client,
    url: '',
    env,
    sentinel: kit,
    kill: notPrivate,
    restart: notPrivate,
    stop: async () => {
      client.disconnect();
      await kit.stop();
    },
  };
}
