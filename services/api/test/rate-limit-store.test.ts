import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Options } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import { CoalescingRedisStore } from '../src/http/rate-limit-store.js';

/**
 * The rate limiter's store: rate-limit-redis's counters, with a token's hits of one turn sent to
 * Redis together, each waiting for Redis's count.
 */
describe('rate limiter store (hits sent to Redis together)', () => {
  let redis: Redis;
  const prefix = `test-rl-${randomUUID().slice(0, 8)}:`;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  /** Lets the store send what it gathered in this turn and Redis answer. */
  const settle = async () => {
    await sleep(5);
    await redis.ping();
  };

  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(() => redis.quit());

  async function makeStore(opts: { limit: number; windowMs?: number }) {
    const client = redis;
    const sent: string[][] = [];
    const store = new CoalescingRedisStore(
      new RedisStore({
        prefix,
        sendCommand: (...command: string[]) => {
          sent.push(command);
          return client.call(command[0]!, ...command.slice(1)) as Promise<number | string>;
        },
      }),
    );
    await store.init({ windowMs: opts.windowMs ?? 60_000, limit: opts.limit } as Options);
    const increments = () => sent.filter((c) => c[0] === 'EVALSHA').length;
    return { store, increments };
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

  it("When hits arrive one at a time, then each waits for Redis, and a turn's hits are still one increment", async () => {
    const { store, increments } = await makeStore({ limit: 1000 });
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
