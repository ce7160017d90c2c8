import { expect } from 'chai';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { keys } from '@mgw/contracts';
import { waitFor } from '@mgw/testing';
import { LeaseManager } from '../src/index.js';

describe('messenger: device leases (real Redis)', () => {
  let redis: Redis;
  const devices: string[] = [];
  const device = () => {
    const id = 'lease-' + randomBytes(4).toString('hex');
    devices.push(id);
    return id;
  };
  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    for (const d of devices) await redis.del(keys.lease(d), keys.leaseEpoch(d));
    await redis.quit();
  });

  it('When two owners race for a device, then exactly one gets it and epochs grow with each owner', async () => {
    const id = device();
    const a = new LeaseManager(redis, 'a', 5000);
    const b = new LeaseManager(redis, 'b', 5000);
    const [la, lb] = await Promise.all([a.acquire(id), b.acquire(id)]);
    expect([la, lb].filter(Boolean)).to.have.length(1);
    const winner = (la ?? lb)!;
    expect(await (winner.owner === 'a' ? a : b).release(winner)).to.equal(true);
    const next = await b.acquire(id);
    expect(next?.epoch).to.be.greaterThan(winner.epoch);
  });

  it('When the lease moved to another owner, then renew says lost and release leaves it alone', async () => {
    const id = device();
    const a = new LeaseManager(redis, 'a', 5000);
    const b = new LeaseManager(redis, 'b', 5000);
    const la = (await a.acquire(id))!;
    await redis.del(keys.lease(id));
    const lb = (await b.acquire(id))!;
    expect(await a.renew(la)).to.equal('lost');
    expect(await a.release(la)).to.equal(false);
    expect((await a.current(id))?.epoch).to.equal(lb.epoch);
    expect(await b.renew(lb)).to.equal('renewed');
  });

  it('When the TTL ran out, then renew says missing and the owner can take it again', async () => {
    const id = device();
    const a = new LeaseManager(redis, 'a', 1000);
    const la = (await a.acquire(id))!;
    await redis.pexpire(keys.lease(id), 1);
    await waitFor(async () => (await redis.exists(keys.lease(id))) === 0, {
      intervalMs: 5,
      what: 'the lapse',
    });
    expect(await a.renew(la)).to.equal('missing');
    expect((await a.acquire(id))?.epoch).to.equal(la.epoch + 1);
  });

  it('When Redis cannot be reached, then renew says unknown (not lost)', async () => {
    const dead = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
    });
    dead.on('error', () => undefined);
    const a = new LeaseManager(dead, 'a', 1000);
    expect(await a.renew({ deviceId: device(), owner: 'a', epoch: 1 })).to.equal('unknown');
    dead.disconnect();
  });
});
