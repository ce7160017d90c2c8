import { expect } from 'chai';
import { Redis } from 'ioredis';
import { loadScript, scriptSource } from '../src/redis-scripts.js';

const DIR = new URL('./fixtures/lua/', import.meta.url);

describe('common: Redis scripts loaded from .lua files (real Redis)', () => {
  let redis: Redis;
  const key = `mgw:test:lua-files:${process.pid}`;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    await redis.del(key);
    await redis.quit();
  });

  it("When a script includes a package part and @mgw/common's shared part, then each is inlined once and it runs by its file name's key count", async () => {
    const source = scriptSource(DIR, 'bump-1');
    expect(source.match(/local function nowMs/g)).to.have.length(1);
    expect(source).to.include('local function bump');
    expect(source).to.not.include('@include');
    const script = loadScript<number>(DIR, 'bump-1');
    expect(script.numKeys).to.equal(1);
    expect(script.name).to.equal('lua:fixtures/bump-1');
    // Redis's clock in ms, as nowMs reads it: the time the script wrote is between two readings
    // taken around its run (an order, with no bound a loaded host could overrun).
    const redisMs = async () => {
      const [sec, usec] = await redis.time();
      return Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
    };
    expect(await script.run(redis, [key], [2])).to.equal(2);
    const before = await redisMs();
    expect(await script.run(redis, [key], [3])).to.equal(5);
    const after = await redisMs();
    expect(Number(await redis.hget(key, 'at'))).to.be.within(before, after);
  });

  it('When a script is called with another number of keys than its name says, then the call fails before reaching Redis', async () => {
    const script = loadScript<number>(DIR, 'bump-1');
    let err: Error | undefined;
    await script.run(redis, [key, `${key}:b`], [1]).catch((e: Error) => (err = e));
    expect(err?.message).to.equal('script lua:fixtures/bump-1 takes 1 keys, was given 2');
  });

  it('When a file name lacks its key count, an include is missing or includes itself, then loading fails at once', () => {
    expect(() => loadScript(DIR, 'bump')).to.throw(/expected <name>-<numKeys>/);
    expect(() => loadScript(DIR, 'absent-1')).to.throw(/ENOENT/);
    expect(() => loadScript(DIR, 'loop-1')).to.throw(/include cycle/);
  });
});
