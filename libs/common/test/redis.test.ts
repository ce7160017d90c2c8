import { expect } from 'chai';
import net from 'node:net';
import { closeRedis, createRedis, pingRedis } from '../src/index.js';

describe('common: Redis helpers', () => {
  it('When Redis answers, then pingRedis is true', async () => {
    const redis = createRedis(process.env.REDIS_URL!, 'worker', 'test');
    try {
      expect(await pingRedis(redis, 2000)).to.equal(true);
    } finally {
      await closeRedis(redis);
    }
  });

  it('When the server accepts but never answers, then pingRedis is false after its deadline instead of hanging', async () => {
    const silent = net.createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    const { port } = silent.address() as net.AddressInfo;
    const redis = createRedis(`redis://127.0.0.1:${port}`, 'worker', 'test');
    try {
      expect(await pingRedis(redis, 200)).to.equal(false);
    } finally {
      redis.disconnect();
      silent.close();
    }
  });
});
