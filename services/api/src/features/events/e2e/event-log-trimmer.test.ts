import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createLogger } from '@mgw/common';
import { keys } from '@mgw/contracts';
import type { EventLog } from '@mgw/store';
import { EventLogTrimmer } from '../event-log-trimmer.js';

/**
 * The trimmer's round under its interval lock, on real Redis, with a stand-in event log that
 * counts the devices it is asked to trim (GET /events' own test, events.test.ts, trims real logs).
 */
describe('API: the event log trimmer walks the devices under its interval lock (real Redis)', () => {
  let redis: Redis;
  const logger = createLogger({ level: 'error', service: 'event-log-trimmer-test' });
  const devices = Array.from({ length: 1500 }, (_, i) => `trim-test-${i}`);

  before(async () => {
    redis = new Redis(process.env.REDIS_URL!);
    await redis.sadd(keys.linkedDevices(), ...devices);
    // A device with a webhook too: the walk's second set, which a lost lock must not start.
    await redis.sadd(keys.webhookDevices(), 'trim-test-webhook');
  });
  after(async () => {
    await redis.srem(keys.linkedDevices(), ...devices);
    await redis.srem(keys.webhookDevices(), 'trim-test-webhook');
    await redis.del(keys.eventLogTrimLock());
    redis.disconnect();
  });
  beforeEach(() => redis.del(keys.eventLogTrimLock()));

  /** A stand-in log: counts the devices, and runs `each` on every chunk it is given. */
  const log = (each: () => Promise<void> = async () => {}) => {
    const seen: string[] = [];
    const eventLog = {
      async trim(ids: string[]) {
        seen.push(...ids);
        await each();
        return ids.length;
      },
    } as unknown as EventLog;
    return { seen, deps: { redis, eventLog, logger } };
  };

  it('When one process trims, then it walks every linked device once; a second process in the same interval skips its round', async () => {
    const a = log();
    const b = log();
    expect(await new EventLogTrimmer(a.deps, 60_000).round()).to.be.at.least(devices.length);
    expect(a.seen).to.include.members(devices);
    expect(new Set(a.seen).size).to.equal(a.seen.length);
    expect(await new EventLogTrimmer(b.deps, 60_000).round()).to.equal(0);
    expect(b.seen).to.deep.equal([]);
  });

  it('When its lock is taken by another process during the walk (it paused past the TTL), then it stops at the next chunk instead of walking beside the other', async () => {
    const chunks: number[] = [];
    const a = log(async () => {
      chunks.push(a.seen.length);
      if (chunks.length > 1) return;
      // The lock lapsed and another process took it; the holder's renewal (every 90 ms) sees it.
      await redis.set(keys.eventLogTrimLock(), 'api:other:99', 'PX', 60_000);
      await new Promise((r) => setTimeout(r, 1000));
    });
    const cut = await new EventLogTrimmer(a.deps, 300).round();
    expect(chunks).to.have.length(1);
    expect(cut).to.equal(a.seen.length);
    expect(cut).to.be.below(devices.length);
    expect(a.seen).to.not.include('trim-test-webhook');
    expect(await redis.get(keys.eventLogTrimLock())).to.equal('api:other:99');
  });
});
