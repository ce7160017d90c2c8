import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';
import { waitFor } from '@mgw/testing';
import { LeaseManager, LeaseRenewer, type RenewRound } from '../src/index.js';

/** Blocks this thread (the event loop) for `ms`, as a long synchronous burst of work would. */
function blockEventLoop(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describe('messenger: lease renewal in one round trip, from its own thread (real Redis)', function () {
  this.timeout(30_000);
  let redis: Redis;
  const devices: string[] = [];
  const device = () => {
    const id = 'renew-' + randomBytes(4).toString('hex');
    devices.push(id);
    return id;
  };
  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    for (const d of devices) await redis.del(keys.lease(d), keys.leaseEpoch(d), keys.handover(d));
    await redis.quit();
  });

  it('When 200 leases are renewed, then it takes one write to Redis and every lease is renewed', async () => {
    const conn = new Redis(process.env.REDIS_URL!);
    const leases = new LeaseManager(conn, 'bulk', 5000);
    const held = (await leases.acquireMany(Array.from({ length: 200 }, device))).map((l) => l!);
    expect(held.every(Boolean)).to.equal(true);
    await leases.renewAll(held); // the first round loads the script
    // Every command reaches Redis through the connection's socket: count the writes.
    let writes = 0;
    const write = conn.stream.write.bind(conn.stream);
    conn.stream.write = ((...args: Parameters<typeof write>) => (writes++, write(...args))) as typeof write;
    const outcomes = await leases.renewAll(held);
    conn.stream.write = write;
    expect(writes).to.equal(1);
    expect(new Set(outcomes)).to.deep.equal(new Set(['renewed']));
    expect(await conn.pttl(keys.lease(held[199]!.deviceId))).to.be.above(4000);
    await conn.quit();
  });

  it('When the lease lapsed and nobody took the device, then the round restores it with the same epoch; once someone took it, or it was released, it is lost', async () => {
    const leases = new LeaseManager(redis, 'lapse', 5000);
    const [a, b, c] = (await leases.acquireMany([device(), device(), device()])).map((l) => l!);
    await redis.del(keys.lease(a!.deviceId), keys.lease(b!.deviceId));
    // b's device was taken (and let go again) meanwhile: its epoch counter moved on.
    const other = (await new LeaseManager(redis, 'other', 5000).acquire(b!.deviceId))!;
    await redis.del(keys.lease(other.deviceId));
    await leases.release(c!);
    expect(await leases.renewAll([a!, b!, c!])).to.deep.equal(['restored', 'lost', 'lost']);
    expect(await leases.current(a!.deviceId)).to.deep.equal({
      deviceId: a!.deviceId,
      owner: 'lapse',
      epoch: a!.epoch,
    });
    expect(await leases.current(c!.deviceId)).to.equal(undefined);
  });

  it('When the event loop is blocked for twice the lease TTL, then the renewer thread keeps the lease (same epoch, never lapsed)', async () => {
    const id = device();
    // A round every 300 ms for a 3 s lease: the thread's renewals may come 2.7 s late (a loaded
    // host starving the thread too) and still hold it.
    const leases = new LeaseManager(redis, 'busy', 3000);
    const renewer = new LeaseRenewer({
      redis: process.env.REDIS_URL!,
      owner: 'busy',
      ttlMs: 3000,
      renewMs: 300,
    });
    await renewer.ready();
    const lease = (await leases.acquire(id))!;
    const outcomes: string[] = [];
    renewer.on('round', (r: RenewRound) => outcomes.push(...r.outcomes.map((o) => o.outcome)));
    renewer.hold(lease);
    await once(renewer, 'round');
    blockEventLoop(6_000);
    expect(await leases.current(id)).to.deep.equal({ deviceId: id, owner: 'busy', epoch: lease.epoch });
    expect(await redis.pttl(keys.lease(id))).to.be.above(300);
    // The rounds that ran meanwhile are reported once the loop is free: renewed, never restored.
    await waitFor(() => outcomes.length >= 5, { intervalMs: 20, what: 'the rounds run meanwhile' });
    expect(new Set(outcomes)).to.deep.equal(new Set(['renewed']));
    await renewer.stop();
  });

  it('When the main thread shows no sign of life beyond the stall limit, then the renewer lets the lease lapse', async () => {
    const id = device();
    const leases = new LeaseManager(redis, 'hung', 1000);
    const renewer = new LeaseRenewer({
      redis: process.env.REDIS_URL!,
      owner: 'hung',
      ttlMs: 1000,
      renewMs: 200,
      stallLimitMs: 1200,
    });
    await renewer.ready();
    const lease = (await leases.acquire(id))!;
    renewer.hold(lease);
    const stalled = once(renewer, 'stalled');
    blockEventLoop(2_800);
    expect(await leases.current(id)).to.equal(undefined);
    await stalled;
    await renewer.stop();
  });

  it('When a lease is handed over to a sender, then only that sender can take it, and its claim carries the hand-over time', async () => {
    const id = device();
    const a = new LeaseManager(redis, 'giver', 5000);
    const lease = (await a.acquire(id))!;
    expect(await a.releaseTo(lease, 'taker', 10_000)).to.equal(true);
    expect(await new LeaseManager(redis, 'bystander', 5000).acquire(id)).to.equal(undefined);
    expect(await a.acquire(id)).to.equal(undefined);
    const taken = (await new LeaseManager(redis, 'taker', 5000).acquire(id))!;
    expect(taken.epoch).to.be.above(lease.epoch);
    expect(taken.handedOverAt).to.be.a('number');
    expect(await redis.exists(keys.handover(id))).to.equal(0);
  });
});
