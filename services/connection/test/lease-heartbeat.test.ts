import { expect } from 'chai';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { keys } from '@mgw/contracts';
import { createLogger } from '@mgw/common';
import { LeaseManager, type RenewOutcome } from '@mgw/messenger';
import { holdLease } from '../src/lease-heartbeat.js';

describe('connection: lease heartbeat release (real Redis)', () => {
  let redis: Redis;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    await redis.quit();
  });

  it('When a renewal that finds the lease expired is in flight as the lease is released, then the lease is not left re-acquired', async () => {
    const deviceId = 'hb-' + randomBytes(4).toString('hex');
    const real = new LeaseManager(redis, 'conn-test', 5000);
    const lease = (await real.acquire(deviceId))!;
    let answerRenew: (o: RenewOutcome) => void = () => undefined;
    let renewCalls = 0;
    let acquireCalls = 0;
    const leases = Object.assign(Object.create(real) as LeaseManager, {
      renew: () => {
        renewCalls += 1;
        return new Promise<RenewOutcome>((resolve) => (answerRenew = resolve));
      },
      acquire: async (id: string) => {
        acquireCalls += 1;
        return real.acquire(id);
      },
    });
    const release = holdLease(
      leases,
      lease,
      20,
      createLogger({ level: 'silent', service: 'test' }),
      () => undefined,
    );
    const deadline = Date.now() + 5_000;
    while (renewCalls === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(renewCalls).to.equal(1);
    // The TTL ran out while the renewal was on its way; the release starts before it answers.
    await redis.del(keys.lease(deviceId));
    const releasing = release();
    answerRenew('missing');
    await releasing;
    expect(await redis.get(keys.lease(deviceId))).to.equal(null);
    expect(acquireCalls).to.equal(0);
    await redis.del(keys.leaseEpoch(deviceId));
  });
});
