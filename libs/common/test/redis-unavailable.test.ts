import { expect } from 'chai';
import { Cluster } from 'ioredis';
import { rm } from 'node:fs/promises';
import {
  fillRedisToMaxmemory,
  freePort,
  startRedisServer,
  waitFor,
  type RedisServerHandle,
} from '@mgw/testing';
import {
  closeRedis,
  createRedis,
  isRedisUnavailableError,
  pingRedis,
  readRedisMemory,
  redisAcceptsWrites,
  waitForRedis,
} from '../src/index.js';

const rejectionOf = (p: Promise<unknown>) =>
  p.then(
    () => expect.fail('the command succeeded'),
    (err: unknown) => err as Error,
  );

describe('common: a Redis at maxmemory (noeviction)', () => {
  let server: RedisServerHandle;
  let redis: ReturnType<typeof createRedis>;
  let refusal: Error;
  let maxBytes: number;
  before(async () => {
    server = await startRedisServer({ args: ['--maxmemory', '4mb', '--maxmemory-policy', 'noeviction'] });
    redis = createRedis(server.url, 'producer', 'oom-test');
    await waitForRedis(redis, 5000);
    ({ refusal, maxBytes } = await fillRedisToMaxmemory(redis));
  });
  after(async () => {
    await closeRedis(redis);
    await server.stop();
  });

  it('When a write is refused for memory, then the error is a storage outage (503), not a bug', () => {
    expect(refusal.message).to.match(/^OOM command not allowed/);
    expect(isRedisUnavailableError(refusal)).to.equal(true);
  });

  it('When a MULTI or a Lua script writes, then their refusals are storage outages too', async () => {
    const multi = await rejectionOf(redis.multi().set('a', '1').incr('b').exec());
    const script = await rejectionOf(redis.eval("return redis.call('SET', KEYS[1], 'v')", 1, 'c'));
    expect(multi.message).to.match(/EXECABORT/);
    expect(isRedisUnavailableError(multi)).to.equal(true);
    expect(script.message).to.include('OOM command not allowed');
    expect(isRedisUnavailableError(script)).to.equal(true);
  });

  it('When readiness is checked, then PING still answers but the write probe says not ready', async () => {
    expect(await pingRedis(redis, 1000)).to.equal(true);
    expect(await redisAcceptsWrites(redis, 'mgw:ready-probe:test', 1000)).to.equal(false);
  });

  it('When memory is read, then used_memory is over maxmemory', async () => {
    const memory = await readRedisMemory(redis, 1000);
    expect(memory?.maxBytes).to.equal(maxBytes);
    expect(memory!.usedBytes).to.be.at.least(memory!.maxBytes);
  });

  it('When memory is freed again, then the write probe passes', async () => {
    await redis.flushdb();
    expect(await redisAcceptsWrites(redis, 'mgw:ready-probe:test', 1000)).to.equal(true);
    expect(await redis.pttl('mgw:ready-probe:test')).to.be.within(1, 10_000);
  });
});

describe('common: cluster and persistence outages are storage outages', () => {
  it('When a cluster node serves no slot, then CLUSTERDOWN is a storage outage', async () => {
    const node = await startRedisServer({ args: ['--cluster-enabled', 'yes'] });
    const redis = createRedis(node.url, 'producer', 'clusterdown-test');
    try {
      await waitForRedis(redis, 5000);
      const err = await rejectionOf(redis.get('k'));
      expect(err.message).to.match(/^CLUSTERDOWN/);
      expect(isRedisUnavailableError(err)).to.equal(true);
    } finally {
      await closeRedis(redis);
      await node.stop();
    }
  });

  it('When Redis cannot persist (its directory is gone) and refuses writes, then MISCONF is a storage outage', async () => {
    const node = await startRedisServer({
      args: ['--save', '3600 1', '--stop-writes-on-bgsave-error', 'yes'],
    });
    const redis = createRedis(node.url, 'producer', 'misconf-test');
    try {
      await waitForRedis(redis, 5000);
      await redis.set('k', 'v');
      // Where it would write its snapshot is gone, as on a full disk: the background save fails.
      const dir = (await redis.config('GET', 'dir')) as string[];
      await rm(dir[1]!, { recursive: true, force: true });
      await redis.bgsave();
      let err: Error | undefined;
      await waitFor(
        async () =>
          (err = await redis.set('k', 'w').then(
            () => undefined,
            (e: Error) => e,
          )) !== undefined,
        {
          timeoutMs: 10_000,
          what: 'a write refused after the failed save',
        },
      );
      expect(err!.message).to.match(/^MISCONF/);
      expect(isRedisUnavailableError(err)).to.equal(true);
    } finally {
      await closeRedis(redis);
      await node.kill();
    }
  });

  it('When an ioredis Cluster client is not ready, then "Cluster isn\'t ready" is a storage outage', async () => {
    const cluster = new Cluster([{ host: '127.0.0.1', port: await freePort() }], {
      enableOfflineQueue: false,
      clusterRetryStrategy: () => null,
    });
    cluster.on('error', () => undefined);
    try {
      const err = await rejectionOf(cluster.get('k'));
      expect(err.message).to.include("Cluster isn't ready");
      expect(isRedisUnavailableError(err)).to.equal(true);
    } finally {
      cluster.disconnect();
    }
  });

  it('When an error wraps an outage (redirection loop, cause, aggregate, a pipeline regrouped by a failover), then it is one; a bug is not', () => {
    // ioredis' own wording when MOVED/ASK answers never settle during a resharding or failover.
    const redirections = new Error(
      'Too many Cluster redirections. Last error: Error: MOVED 866 127.0.0.1:7001',
    );
    const wrapped = new Error('enqueue failed', { cause: new Error('CLUSTERDOWN The cluster is down') });
    const aggregate = new AggregateError([new Error('LOADING Redis is loading the dataset in memory')]);
    // An auto-pipelined group whose slots moved to other nodes before it was sent (a failover).
    const regrouped = new Error('All keys in the pipeline should belong to the same slots allocation group');
    for (const err of [redirections, wrapped, aggregate, regrouped])
      expect(isRedisUnavailableError(err)).to.equal(true);
    for (const err of [new TypeError('x is undefined'), new Error('WRONGTYPE Operation'), 'OOM']) {
      expect(isRedisUnavailableError(err), String(err)).to.equal(false);
    }
  });
});
