import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createLogger } from '@mgw/common';
import { DeviceConnection } from '../src/index.js';

describe('messenger: device connection hand-over (no socket)', () => {
  let redis: Redis;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    await redis.quit();
  });

  const connection = () =>
    new DeviceConnection({
      redis,
      logger: createLogger({ level: 'silent', service: 'test' }),
      deviceId: 'conn-test',
      messageRetentionSeconds: 60,
      epoch: () => 1,
    });

  it('When the hand-over begins while a job waits for the socket to open, then the wait ends at once with false', async () => {
    const conn = connection();
    const started = Date.now();
    const waiting = conn.waitForOpen(30_000);
    conn.drain();
    expect(await waiting).to.equal(false);
    expect(Date.now() - started).to.be.below(5_000);
    // A job that starts waiting after the hand-over began does not wait either.
    expect(await conn.waitForOpen(30_000)).to.equal(false);
  });
});
