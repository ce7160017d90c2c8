import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createLogger } from '@mgw/common';
import { waitFor } from '@mgw/testing';
import { Liveness } from '../src/liveness.js';

/** What the connection service's /readyz reads besides Redis: is this process announced now? */
describe('connection: its liveness, as its readiness reads it (real Redis)', () => {
  const logger = createLogger({ level: 'silent', service: 'test' });
  const owner = () => `connection:live-${Math.random().toString(36).slice(2, 8)}`;
  let redis: Redis;
  let observer: Liveness;

  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
    observer = new Liveness(redis, 'connection:observer', logger);
  });
  after(() => redis.quit());

  it('When it has not started, then it is not announced; once started it is, as other processes see it; after stop it is not', async () => {
    const id = owner();
    const liveness = new Liveness(redis, id, logger);
    expect(liveness.announced()).to.equal(false);
    await liveness.start();
    expect(liveness.announced()).to.equal(true);
    expect(await observer.isAlive(id)).to.equal(true);
    await liveness.stop();
    expect(liveness.announced()).to.equal(false);
    expect(await observer.isAlive(id)).to.equal(false);
  });

  it('When its beats stop reaching Redis, then it stops counting itself announced once the TTL has passed', async () => {
    const id = owner();
    // Its own connection, closed below: every later beat fails.
    const own = new Redis(process.env.REDIS_URL!);
    const liveness = new Liveness(own, id, logger, 100, 600);
    try {
      await liveness.start();
      expect(liveness.announced()).to.equal(true);
      own.disconnect();
      // Its 600 ms TTL: waited for up to 10 s.
      await waitFor(() => !liveness.announced(), {
        timeoutMs: 10_000,
        intervalMs: 50,
        what: 'not announced',
      });
      // Redis agrees: its entry expired too.
      await waitFor(async () => !(await observer.isAlive(id)), { timeoutMs: 10_000, what: 'entry expired' });
    } finally {
      await liveness.stop();
    }
  });
});
