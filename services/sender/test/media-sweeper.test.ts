import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createLogger } from '@mgw/common';
import { keys } from '@mgw/contracts';
import type { MediaStore } from '@mgw/store';
import { waitFor } from '@mgw/testing';
import { MediaSweeper } from '../src/inbound/media-sweeper.js';

/**
 * The S3 media retention sweep of a fleet of senders: each sender's sweeper ticks every interval,
 * and one sweep runs per interval across them (the interval lock), on real Redis. The bucket is a
 * stand-in that records when each sweep ran.
 */
describe('sender: the media sweep runs once per interval across senders (real Redis)', () => {
  const connections: Redis[] = [];
  const logger = createLogger({ level: 'error', service: 'media-sweeper-test' });

  /** The fleet's one lock, free before and after (a lapse would otherwise take up to an interval). */
  const freeLock = async () => {
    const redis = new Redis(process.env.REDIS_URL!);
    await redis.del(keys.mediaSweepLock());
    redis.disconnect();
  };
  before(freeLock);
  after(async () => {
    await freeLock();
    for (const c of connections) c.disconnect();
  });

  it('When two senders sweep every 1.5 s, then sweeps never overlap (a long one keeps the lock) and start at least an interval apart, less its margin', async function () {
    this.timeout(60_000);
    // A 1.5 s interval: the lock (1.35 s) is renewed every 450 ms, so a renewal 900 ms late on a
    // loaded host still holds it (a 300 ms interval left 180 ms).
    const sweeps: { start: number; end: number }[] = [];
    let running = 0;
    let overlapped = false;
    const bucket = {
      kind: 's3',
      async sweep() {
        if (running++ > 0) overlapped = true;
        const start = Date.now();
        // The first sweep outlasts two intervals: the lock is renewed while it runs.
        await new Promise((r) => setTimeout(r, sweeps.length === 0 ? 3500 : 30));
        sweeps.push({ start, end: Date.now() });
        running--;
        return 0;
      },
    } as unknown as MediaStore;
    const senders = [0, 1].map(() => {
      const redis = new Redis(process.env.REDIS_URL!);
      connections.push(redis);
      return new MediaSweeper(redis, bucket, 1500, logger);
    });
    for (const s of senders) s.start();
    try {
      await waitFor(() => sweeps.length >= 5, { intervalMs: 50, timeoutMs: 45_000, what: 'five sweeps' });
    } finally {
      await Promise.all(senders.map((s) => s.stop()));
    }
    expect(overlapped).to.equal(false);
    for (let i = 1; i < sweeps.length; i++) {
      // The lock (1.35 s, from its take or last renewal) spaces the starts; 1 s of slack for the
      // Redis round trips between taking the lock and the stand-in noting its start (a few ms
      // quiet), still far from back-to-back sweeps.
      expect(sweeps[i]!.start - sweeps[i - 1]!.start, `sweep ${i}`).to.be.at.least(1350 - 1000);
      expect(sweeps[i]!.start, `sweep ${i} began after the one before ended`).to.be.at.least(
        sweeps[i - 1]!.end,
      );
    }
  });
});
