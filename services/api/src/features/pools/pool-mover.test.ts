import { expect } from 'chai';
import { createMetrics } from '@mgw/contracts';
import { MemoryRedis } from '../test-support.js';
import { config, quietLogger } from './pool-fixture.js';
import { PoolMover } from './pool-mover.js';

/**
 * The pool mover without Redis: the pool index in an in-memory Redis. What runs a store's script
 * (the mover's lease) is in the full suite (the pools' e2e tests).
 */
describe("PoolMover: the rounds that move a pool's devices (in-memory Redis)", () => {
  const logger = quietLogger();
  let redis: MemoryRedis;

  beforeEach(() => {
    redis = new MemoryRedis();
  });

  it('When no pool exists, then a round looks at none (only the pool index read); stopped, it runs no more rounds', async () => {
    const mover = new PoolMover({ redis: redis.client, config, logger, metrics: createMetrics() } as never, {
      intervalMs: 5,
      minHealth: 50,
    });
    expect(await mover.round()).to.deep.equal([]);
    expect(redis.commands).to.deep.equal(['smembers']);
    mover.start();
    await mover.stop();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(redis.commands, 'no round after stop').to.deep.equal(['smembers']);
  });
});
