import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { MemoryRedis } from '../test-support.js';
import { quietLogger } from './event-fixture.js';
import { EventLogTrimmer } from './event-log-trimmer.js';

describe("EventLogTrimmer: each device's event log trimmed once a round (an in-memory Redis)", () => {
  const logger = quietLogger();

  it('When it walks the devices, then each linked or webhook device is trimmed once, whichever sets name it; stopped, it schedules no round', async () => {
    const redis = new MemoryRedis();
    redis.addMembers(keys.linkedDevices(), 'd-1', 'd-2');
    redis.addMembers(keys.webhookDevices(), 'd-2', 'd-3');
    const trimmed: string[][] = [];
    const trimmer = new EventLogTrimmer({
      redis: redis.client,
      eventLog: { trim: async (devices: string[]) => (trimmed.push(devices), devices.length * 10) },
      logger,
    });
    // One round's walk, as the interval's lock runs it (the lock is a script: the full suite's).
    const walk = (trimmer as unknown as { trim(lost: AbortSignal): Promise<number> }).trim.bind(trimmer);
    expect(await walk(new AbortController().signal)).to.equal(30);
    expect(trimmed).to.deep.equal([['d-1', 'd-2'], ['d-3']]);
    trimmer.start();
    await trimmer.stop();
    expect(redis.commands).to.deep.equal(['sscan', 'sscan']);
  });
});
