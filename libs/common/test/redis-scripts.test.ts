import { expect } from 'chai';
import { Redis } from 'ioredis';
import { RedisScript, runScriptMany } from '../src/index.js';

const INCR_BY = new RedisScript<number>(
  'mgwTestIncrBy',
  "return redis.call('INCRBY', KEYS[1], tonumber(ARGV[1]))",
);

/** Calls of a command since Redis started (INFO commandstats). */
async function calls(redis: Redis, command: string): Promise<number> {
  const info = await redis.info('commandstats');
  return Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
}

describe('common: Lua scripts defined once, run by SHA (real Redis)', () => {
  let redis: Redis;
  const key = `mgw:test:scripts:${process.pid}`;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    await redis.del(key, `${key}:b`, `${key}:first`);
    await redis.quit();
  });

  it('When a script runs again and again, then it is sent by EVALSHA, never as its whole text', async () => {
    await INCR_BY.run(redis, [key], [1]);
    const [sha0, eval0] = [await calls(redis, 'evalsha'), await calls(redis, 'eval')];
    for (let i = 0; i < 5; i++) await INCR_BY.run(redis, [key], [1]);
    expect((await calls(redis, 'evalsha')) - sha0).to.equal(5);
    expect((await calls(redis, 'eval')) - eval0).to.equal(0);
    expect(await redis.get(key)).to.equal('6');
  });

  it('When a script runs for the first time while an auto-pipeline of the connection is open, then it runs', async () => {
    const auto = new Redis(process.env.REDIS_URL!, { enableAutoPipelining: true });
    try {
      await auto.ping();
      const first = new RedisScript<number>(
        `mgwTestFirst${process.pid}`,
        "return redis.call('INCRBY', KEYS[1], tonumber(ARGV[1])) + 0",
      );
      // The GET opens this turn's auto-pipeline before the script is known to the connection.
      const [before, after] = await Promise.all([
        auto.get(`${key}:first`),
        first.run(auto, [`${key}:first`], [1]),
      ]);
      expect([before, after]).to.deep.equal([null, 1]);
    } finally {
      await auto.quit();
    }
  });

  it('When Redis lost its scripts (restart, failover), then the next call still runs (NOSCRIPT fallback), in a pipeline too', async () => {
    await redis.script('FLUSH');
    expect(await INCR_BY.run(redis, [key], [10])).to.equal(16);
    await redis.script('FLUSH');
    const replies = await runScriptMany(redis, INCR_BY, [
      { keys: [key], args: [1] },
      { keys: [`${key}:b`], args: [2] },
    ]);
    expect(replies).to.deep.equal([17, 2]);
  });
});
