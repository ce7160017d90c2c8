import { expect } from 'chai';
import { startRedisSentinel } from '../src/index.js';

describe('test harness: Redis Sentinel without the redis-sentinel package', function () {
  this.timeout(60_000);

  it('When sentinels run as redis-server --sentinel (no redis-sentinel on the machine), then they watch the master and fail over to the replica', async () => {
    const sentinel = await startRedisSentinel({ sentinelProgram: 'redis-server' });
    try {
      const old = await sentinel.masterPort();
      expect(sentinel.nodes.map((n) => n.port)).to.include(old);
      await sentinel.failover();
      const promoted = await sentinel.waitForNewMaster(old);
      expect(promoted.port).to.not.equal(old);
    } finally {
      await sentinel.stop();
    }
  });
});
