import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { ClientRateLimitInfo, Options } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import {
  ADMIT_AHEAD_SHARE,
  AHEAD_FLUSH_MS,
  CoalescingRedisStore,
  FRESH_MS,
} from '../src/http/rate-limit-store.js';

/**
 * The rate limiter's store: rate-limit-redis's counters, with a busy token's hits sent to Redis
 * together and admitted ahead of Redis's reply while it is well within its limit.
 */
describe('rate limiter store (hits sent to Redis together)', () => {
  let redis: Redis;
  const prefix = `test-rl-${randomUUID().slice(0, 8)}:`;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  /** Lets the store send what it gathered in this turn and Redis answer. */
  const settle = async () => {
    await sleep(AHEAD_FLUSH_MS + 5);
    await redis.ping();
  };

  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(() => redis.quit());

  /** Counts read from Redis stay fresh for 10 s unless a test says otherwise (slow CI machines). */
  async function makeStore(opts: {
    limit: number;
    windowMs?: number;
    client?: Redis;
    freshMs?: number;
    admitAhead?: boolean;
  }) {
    const client = opts.client ?? redis;
    const sent: string[][] = [];
    const lost: number[] = [];
    const store = new CoalescingRedisStore(
      new RedisStore({
        prefix,
        sendCommand: (...command: string[]) => {
          sent.push(command);
          return client.call(command[0]!, ...command.slice(1)) as Promise<number | string>;
        },
      }),
      {
        admitAhead: opts.admitAhead ?? true,
        onLostHits: (_err, hits) => lost.push(hits),
        freshMs: opts.freshMs ?? 10_000,
      },
    );
    await store.init({ windowMs: opts.windowMs ?? 60_000, limit: opts.limit } as Options);
    const increments = () => sent.filter((c) => c[0] === 'EVALSHA').length;
    return { store, increments, lost };
  }
  const hit = async (store: CoalescingRedisStore, key: string) => (await store.increment(key)).totalHits;
  const countInRedis = async (key: string) => Number(await redis.get(`${prefix}${key}`));

  it('When a burst of hits of one token arrives in one turn, then they are one increment in Redis and each gets its own count', async () => {
    const { store, increments } = await makeStore({ limit: 1000 });
    const key = randomUUID();
    const totals = await Promise.all(Array.from({ length: 50 }, () => hit(store, key)));

    expect([...totals].sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(increments()).to.equal(1);
    expect(await countInRedis(key)).to.equal(50);
    const ttl = await redis.pttl(`${prefix}${key}`);
    expect(ttl).to.be.within(1, 60_000);
  });

  it('When a busy token is well within its limit, then its hit is answered at once and counted in Redis within AHEAD_FLUSH_MS', async () => {
    const { store } = await makeStore({ limit: 1000 });
    const key = randomUUID();
    // The first hit of a token waits for Redis.
    expect(store.increment(key)).to.be.instanceOf(Promise);
    await settle();
    for (let i = 2; i <= 20; i++) {
      const info = store.increment(key) as ClientRateLimitInfo;
      expect(info).not.to.be.instanceOf(Promise);
      expect(info.totalHits).to.equal(i);
      expect(info.resetTime!.getTime()).to.be.within(Date.now(), Date.now() + 60_000);
      await settle();
      expect(await countInRedis(key)).to.equal(i);
    }
  });

  it('When a busy token is admitted ahead over several turns, then those hits go to Redis together', async () => {
    const { store, increments } = await makeStore({ limit: 1000 });
    const key = randomUUID();
    await hit(store, key);
    const before = increments();
    for (let i = 0; i < 10; i++) {
      expect(store.increment(key)).not.to.be.instanceOf(Promise);
      await new Promise((r) => setImmediate(r));
    }
    await settle();
    expect(increments() - before).to.be.within(1, 9);
    expect(await countInRedis(key)).to.equal(11);
  });

  it('When two replicas share a token, then exactly the limit is admitted, one hit at a time or all at once', async () => {
    const limit = 10;
    const a = await makeStore({ limit });
    const b = await makeStore({ limit });
    const oneByOne = randomUUID();
    const admitted: boolean[] = [];
    for (let i = 0; i < 30; i++) admitted.push((await hit((i % 2 ? a : b).store, oneByOne)) <= limit);
    expect(admitted.filter(Boolean)).to.have.length(limit);
    expect(await countInRedis(oneByOne)).to.equal(30);

    const atOnce = randomUUID();
    const totals = await Promise.all(
      Array.from({ length: 30 }, (_, i) => hit((i % 2 ? a : b).store, atOnce)),
    );
    expect(totals.filter((t) => t <= limit)).to.have.length(limit);
    expect(await countInRedis(atOnce)).to.equal(30);
  });

  it('When a token is past half of its limit, then every hit waits for Redis', async () => {
    const limit = 10;
    const { store } = await makeStore({ limit });
    const key = randomUUID();
    const waited: boolean[] = [];
    for (let i = 0; i < 8; i++) {
      const r = store.increment(key);
      waited.push(r instanceof Promise);
      await r;
      await settle();
    }
    const ahead = Math.floor(limit * ADMIT_AHEAD_SHARE);
    // The first waits (unknown token); hits 2..ahead go ahead; from ahead+1 on, each waits.
    expect(waited).to.deep.equal(Array.from({ length: 8 }, (_, i) => i === 0 || i + 1 > ahead));
  });

  it("When Redis's count is older than FRESH_MS, then the next hit asks Redis and sees the other replicas' hits", async () => {
    const a = await makeStore({ limit: 1000, freshMs: FRESH_MS });
    const b = await makeStore({ limit: 1000 });
    const key = randomUUID();
    await hit(a.store, key);
    await hit(b.store, key);
    await hit(b.store, key);
    await sleep(FRESH_MS + 20);
    const r = a.store.increment(key);
    expect(r).to.be.instanceOf(Promise);
    expect((await r).totalHits).to.equal(4);
  });

  it('When the window ends, then the next hit starts a new one at 1', async () => {
    const { store } = await makeStore({ limit: 1000, windowMs: 150 });
    const key = randomUUID();
    expect(await hit(store, key)).to.equal(1);
    expect(await hit(store, key)).to.equal(2);
    await settle();
    await sleep(200);
    expect(await hit(store, key)).to.equal(1);
    await settle();
    expect(await countInRedis(key)).to.equal(1);
  });

  it('When Redis fails under hits admitted ahead, then they are reported lost and the next hit waits for Redis (and fails)', async () => {
    const client = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 0, enableOfflineQueue: false });
    client.on('error', () => undefined);
    try {
      await new Promise((resolve) => client.once('ready', resolve));
      const { store, lost } = await makeStore({ limit: 1000, client });
      const key = randomUUID();
      await hit(store, key);
      expect((store.increment(key) as ClientRateLimitInfo).totalHits).to.equal(2);
      client.disconnect();
      await sleep(20);
      expect(lost).to.deep.equal([1]);
      const next = store.increment(key);
      expect(next).to.be.instanceOf(Promise);
      let failed: unknown;
      await (next as Promise<ClientRateLimitInfo>).catch((err: unknown) => (failed = err));
      expect(failed).to.be.instanceOf(Error);
    } finally {
      client.disconnect();
    }
  });

  it("When an endpoint does not admit ahead, then every hit waits for Redis, and a turn's hits are still one increment", async () => {
    const { store, increments } = await makeStore({ limit: 1000, admitAhead: false });
    const key = randomUUID();
    for (let i = 1; i <= 5; i++) {
      const r = store.increment(key);
      expect(r).to.be.instanceOf(Promise);
      expect((await r).totalHits).to.equal(i);
    }
    await Promise.all([hit(store, key), hit(store, key), hit(store, key)]);
    expect(increments()).to.equal(6);
    expect(await countInRedis(key)).to.equal(8);
  });

  it('When a key is reset, then its count starts again from Redis', async () => {
    const { store } = await makeStore({ limit: 1000 });
    const key = randomUUID();
    await hit(store, key);
    await hit(store, key);
    await settle();
    await store.resetKey(key);
    expect(await hit(store, key)).to.equal(1);
  });
});
