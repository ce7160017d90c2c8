import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys, newMessageId } from '@mgw/contracts';
import { BatchStore } from '../src/batches/batch-store.js';
import { batchStop, controlBatch, heldMessageIds } from '../src/batches/batch-control.js';
import { PoolBatchStore } from '../src/pools/pool-batches.js';

/**
 * The store's batch module was `lists/` and is `batches/` now (issue 69): one name, from the docs to
 * the Redis keys. The keys already said `batch`, so an upgrade moves no data: the keys a running
 * install holds are spelled exactly as before, and what an earlier release wrote under them is read
 * by this one. The key strings below are written out by hand, as the earlier release spelled them —
 * not built with `keys` — so a change of spelling fails here instead of orphaning data.
 */
describe("store: batches keep their Redis keys across the module's rename (real Redis)", () => {
  let redis: Redis;
  let batches: BatchStore;
  let pools: PoolBatchStore;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    batches = new BatchStore(redis, 600);
    pools = new PoolBatchStore(redis, 600);
  });
  after(async () => {
    await redis.quit();
  });

  const suffix = () => Math.random().toString(36).slice(2, 8);

  it("When the batch keys are built, then each is byte-identical to the earlier release's spelling", () => {
    expect(keys.batch('dev-1', 'b-1')).to.equal('mgw:{dev-1}:batch:b-1');
    expect(keys.batchHeld('dev-1', 'b-1')).to.equal('mgw:{dev-1}:batch:b-1:held');
    expect(keys.batchIndex('dev-1')).to.equal('mgw:{dev-1}:batch-index');
    expect(keys.poolBatch('shops', 'b-1')).to.equal('mgw:{pool:shops}:batch:b-1');
    expect(keys.poolBatchIndex('shops')).to.equal('mgw:{pool:shops}:batch-index');
    expect(keys.poolOpenBatches('shops')).to.equal('mgw:{pool:shops}:batches-open');
    expect(keys.poolShare('shops', 'b-1', 'dev-1')).to.equal('mgw:{pool:shops}:batch:b-1:share:dev-1');
  });

  it('When the store accepts a batch, then it writes exactly the keys the earlier release wrote', async () => {
    const deviceId = `bk-${suffix()}`;
    const batchId = newMessageId();
    const at = new Date();
    const multi = redis.multi();
    batches.stage(multi, deviceId, batchId, 3, at);
    await multi.exec();

    const hash = `mgw:{${deviceId}}:batch:${batchId}`;
    const index = `mgw:{${deviceId}}:batch-index`;
    expect(await redis.type(hash)).to.equal('hash');
    expect(await redis.hgetall(hash)).to.deep.equal({ total: '3', queued: '3', createdAt: at.toISOString() });
    expect(await redis.type(index)).to.equal('zset');
    expect(await redis.zscore(index, batchId)).to.equal(String(at.getTime()));
    expect(await redis.keys(`mgw:{${deviceId}}:*`)).to.have.members([hash, index]);
  });

  it('When a batch was written by the earlier release (the module then named lists/), then this one reads, lists, pauses and steers it in place', async () => {
    const deviceId = `bk-${suffix()}`;
    const batchId = newMessageId();
    const createdAt = new Date(Date.now() - 60_000);
    const hash = `mgw:{${deviceId}}:batch:${batchId}`;
    const held = `mgw:{${deviceId}}:batch:${batchId}:held`;
    const index = `mgw:{${deviceId}}:batch-index`;
    // As the earlier release left it: 4 messages, 1 sent, 1 failed, 2 queued of which 1 held.
    await redis
      .multi()
      .hset(hash, { total: '4', queued: '2', sent: '1', failed: '1', createdAt: createdAt.toISOString() })
      .expire(hash, 600)
      .sadd(held, 'm-held')
      .expire(held, 600)
      .zadd(index, createdAt.getTime(), batchId)
      .expire(index, 600)
      .exec();

    const record = await batches.get(deviceId, batchId);
    expect(record).to.deep.include({
      batchId,
      total: 4,
      state: 'active',
      createdAt: createdAt.toISOString(),
    });
    expect(record!.counts).to.deep.include({ queued: 2, sent: 1, failed: 1, held: 1 });
    expect((await batches.list(deviceId, 10)).batches.map((b) => b.batchId)).to.deep.equal([batchId]);
    const ids: string[] = [];
    for await (const page of heldMessageIds(redis, deviceId, batchId)) ids.push(...page);
    expect(ids).to.deep.equal(['m-held']);

    // A control of this release lands on the same hash: no second record beside the old one.
    expect(await controlBatch(redis, deviceId, batchId, 'pause')).to.equal('changed');
    expect(await redis.hget(hash, 'pausedAt')).to.be.a('string');
    expect(await batchStop(redis, deviceId, batchId)).to.equal('paused');
    expect((await batches.get(deviceId, batchId))!.state).to.equal('paused');
    // (The event of the pause goes to the device's event log and outbox, beside them.)
    const own = (await redis.keys(`mgw:{${deviceId}}:*`)).filter((k) => !/:(event-log|events)$/.test(k));
    expect(own).to.have.members([hash, held, index]);
  });

  it('When a pooled batch was written by the earlier release, then this one reads its parts and finds it open', async () => {
    const poolId = `bk-pool-${suffix()}`;
    const [a, b] = [`bk-${suffix()}`, `bk-${suffix()}`];
    const batchId = newMessageId();
    const createdAt = new Date(Date.now() - 60_000).toISOString();
    await redis
      .multi()
      .hset(`mgw:{pool:${poolId}}:batch:${batchId}`, {
        createdAt,
        total: '3',
        devices: JSON.stringify([a, b]),
        moved: '1',
      })
      .zadd(`mgw:{pool:${poolId}}:batch-index`, Date.parse(createdAt), batchId)
      .sadd(`mgw:{pool:${poolId}}:batches-open`, batchId)
      .sadd(`mgw:{pool:${poolId}}:batch:${batchId}:share:${a}`, 'm-a1')
      .hset(`mgw:{${a}}:batch:${batchId}`, { total: '2', queued: '1', sent: '1', createdAt })
      .hset(`mgw:{${b}}:batch:${batchId}`, { total: '1', queued: '1', createdAt })
      .exec();

    const record = await pools.get(poolId, batchId);
    expect(record).to.deep.include({ batchId, poolId, total: 3, state: 'active', moved: 1, createdAt });
    expect(record!.counts).to.deep.include({ queued: 2, sent: 1 });
    expect(record!.devices.map((d) => [d.deviceId, d.total])).to.deep.equal([
      [a, 2],
      [b, 1],
    ]);
    expect((await pools.list(poolId, 10)).batches.map((x) => x.batchId)).to.deep.equal([batchId]);
    expect(await pools.openBatches(poolId)).to.deep.equal([batchId]);
    expect(await pools.shareSize(poolId, batchId, a)).to.equal(1);
  });
});
