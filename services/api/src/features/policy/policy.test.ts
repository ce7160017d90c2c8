import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { loadApiConfig } from '../../config.js';
import { MemoryRedis } from '../test-support.js';
import { changePolicy, devicePolicy, endRestriction, type PolicyDeps } from './policy.js';

/** A device's sending policy as the admin API changes it: its settings and pause in an in-memory Redis, its queue faked. */
describe("A device's sending policy: devicePolicy, changePolicy, endRestriction (in-memory Redis)", () => {
  const deviceId = 'pol-1';
  const config = loadApiConfig({ ...process.env, NODE_ENV: 'test' }).sendPolicy;
  let redis: MemoryRedis;
  let promoted: string[];
  let d: PolicyDeps;

  beforeEach(() => {
    redis = new MemoryRedis();
    promoted = [];
    d = {
      redis: redis.client,
      config,
      queueOf: (id: string) => ({ promoteJobs: async () => void promoted.push(id) }) as never,
    };
  });

  it('When the policy is read, then no overrides and the defaults in force, with today’s usage', async () => {
    const read = await devicePolicy(d, deviceId);
    expect(read.deviceId).to.equal(deviceId);
    expect(read.overrides).to.deep.equal({});
    expect(read.sending.sentToday).to.equal(0);
  });

  it('When a cap is overridden, then it is in force at once and the held messages look again; null removes it', async () => {
    const changed = await changePolicy(d, deviceId, { dailyCap: 7 });
    expect(changed.overrides).to.deep.equal({ dailyCap: 7 });
    expect(changed.sending.dailyCap).to.equal(7);
    expect(promoted).to.deep.equal([deviceId]);
    expect((await changePolicy(d, deviceId, { dailyCap: null })).overrides).to.deep.equal({});
  });

  it('When the pause is ended, then cleared (and the held messages look again) only if the device was paused', async () => {
    expect(await endRestriction(d, deviceId)).to.deep.include({ cleared: false });
    expect(promoted).to.deep.equal([]);
    redis.hash(keys.deviceRestriction(deviceId), {
      reason: 'rate_limited',
      until: String(Date.now() + 60_000),
      since: String(Date.now()),
    });
    expect(await endRestriction(d, deviceId)).to.deep.include({ cleared: true });
    expect(promoted).to.deep.equal([deviceId]);
    expect(redis.hashes.has(keys.deviceRestriction(deviceId))).to.equal(false);
  });
});
