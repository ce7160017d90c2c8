import { expect } from 'chai';
import { closeRedis, createRedis, waitForRedis } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { Cluster, type Redis } from 'ioredis';
import { startRedisCluster, type ClusterHandle } from '@mgw/testing';
import { PoolInputError, PoolStore, TokenStore } from '../src/index.js';

describe('PoolStore: pool definitions and their index (real Redis)', () => {
  let redis: Redis;
  let store: PoolStore;
  // The suite's Redis is shared: pool and device ids of this run only.
  const tag = `${process.pid}`;
  const id = (name: string) => `${name}-${tag}`;
  const made: string[] = [];

  before(async () => {
    redis = createRedis(process.env.REDIS_URL!, 'producer', 'test-pools');
    await waitForRedis(redis);
    store = new PoolStore(redis);
  });
  after(async () => {
    for (const p of made) await store.delete(p);
    await closeRedis(redis);
  });

  const create = async (poolId: string, devices: string[], name = 'Shop') => {
    made.push(poolId);
    return store.create({ id: poolId, name, devices });
  };

  it('When a pool is created, then its hash and index entry are written and get/list read it back', async () => {
    const now = new Date('2030-01-02T03:04:05.000Z');
    made.push(id('alpha'));
    const created = await store.create(
      { id: id('alpha'), name: '  Alpha shops ', devices: ['d-1', 'd-2'] },
      now,
    );
    expect(created).to.deep.equal({
      id: id('alpha'),
      name: 'Alpha shops',
      devices: ['d-1', 'd-2'],
      workspace: 'default',
      otpFallback: false,
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
    });
    expect(await redis.hgetall(keys.pool(id('alpha')))).to.deep.equal({
      id: id('alpha'),
      name: 'Alpha shops',
      devices: '["d-1","d-2"]',
      workspace: 'default',
      otpFallback: '0',
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
    });
    expect(await redis.sismember(keys.poolIndex(), id('alpha'))).to.equal(1);
    expect(await store.get(id('alpha'))).to.deep.equal(created);
    await create(id('aaa'), ['d-3']);
    const listed = (await store.list()).map((p) => p.id);
    expect(listed).to.include.members([id('aaa'), id('alpha')]);
    expect(listed.indexOf(id('aaa'))).to.be.lessThan(listed.indexOf(id('alpha')));
    expect(listed).to.deep.equal([...listed].sort());
  });

  it("When a pool was written before pools had a workspace, then it reads as default's, and a named workspace is kept", async () => {
    await create(id('legacy'), ['d-1']);
    await redis.hdel(keys.pool(id('legacy')), 'workspace');
    expect(await store.get(id('legacy'))).to.include({ workspace: 'default' });
    expect(await store.workspaceOf(id('legacy'))).to.equal('default');
    made.push(id('owned'));
    await store.create({ id: id('owned'), name: 'Owned', devices: ['d-1'], workspace: 'acme' });
    expect(await store.workspaceOf(id('owned'))).to.equal('acme');
    expect(await store.workspaceOf(id('nobody'))).to.equal(undefined);
  });

  it('When an id is taken, then create answers exists and leaves the pool as it was', async () => {
    await create(id('taken'), ['d-1'], 'First');
    expect(await create(id('taken'), ['d-9'], 'Second')).to.equal('exists');
    expect(await store.get(id('taken'))).to.include({ name: 'First' });
    expect((await store.get(id('taken')))!.devices).to.deep.equal(['d-1']);
  });

  it('When two creates of one id race, then exactly one pool is written', async () => {
    made.push(id('race'));
    const answers = await Promise.all(
      ['A', 'B', 'C', 'D'].map((n) => store.create({ id: id('race'), name: n, devices: ['d-1'] })),
    );
    expect(answers.filter((a) => a === 'exists')).to.have.length(3);
    const winner = answers.find((a) => a !== 'exists')!;
    expect(await store.get(id('race'))).to.deep.equal(winner);
  });

  it('When a crash left the definition without its index entry, then creating it again answers exists and lists it', async () => {
    await create(id('orphan'), ['d-1']);
    await redis.srem(keys.poolIndex(), id('orphan'));
    expect((await store.list()).map((p) => p.id)).not.to.include(id('orphan'));
    expect(await create(id('orphan'), ['d-1'])).to.equal('exists');
    expect((await store.list()).map((p) => p.id)).to.include(id('orphan'));
  });

  it('When a pool is updated, then the given fields and updatedAt change and the rest stays', async () => {
    const at = new Date('2030-01-01T00:00:00.000Z');
    made.push(id('upd'));
    await store.create({ id: id('upd'), name: 'Before', devices: ['d-1'] }, at);
    const later = new Date('2030-02-01T00:00:00.000Z');
    const renamed = await store.update(id('upd'), { name: 'After' }, later);
    expect(renamed).to.deep.equal({
      id: id('upd'),
      name: 'After',
      devices: ['d-1'],
      workspace: 'default',
      otpFallback: false,
      createdAt: at.toISOString(),
      updatedAt: later.toISOString(),
    });
    const moved = await store.update(id('upd'), { devices: ['d-2', 'd-3'] });
    expect(moved).to.include({ name: 'After' });
    expect(moved!.devices).to.deep.equal(['d-2', 'd-3']);
    expect(await store.get(id('upd'))).to.deep.equal(moved);
    // The OTP fallback is off until turned on, alone or with the rest; a pool from before reads off.
    expect(await store.update(id('upd'), { otpFallback: true })).to.include({
      otpFallback: true,
      name: 'After',
    });
    await redis.hdel(keys.pool(id('upd')), 'otpFallback');
    expect(await store.get(id('upd'))).to.include({ otpFallback: false });
  });

  it('When a missing pool is updated or deleted, then nothing is created and the answers say so', async () => {
    expect(await store.update(id('nobody'), { name: 'x' })).to.equal(undefined);
    expect(await redis.exists(keys.pool(id('nobody')))).to.equal(0);
    expect(await store.delete(id('nobody'))).to.equal(false);
    expect(await store.get(id('nobody'))).to.equal(undefined);
    expect(await store.get('Not A Slug')).to.equal(undefined);
  });

  it('When a pool is deleted, then its hash and index entry are gone', async () => {
    await create(id('gone'), ['d-1']);
    expect(await store.delete(id('gone'))).to.equal(true);
    expect(await redis.exists(keys.pool(id('gone')))).to.equal(0);
    expect(await redis.sismember(keys.poolIndex(), id('gone'))).to.equal(0);
    expect(await store.delete(id('gone'))).to.equal(false);
  });

  it('When a device is in several pools, then poolsOfDevice names each of them', async () => {
    const shared = `shared-${tag}`;
    await create(id('p1'), [shared, 'd-1']);
    await create(id('p2'), ['d-2', shared]);
    await create(id('p3'), ['d-3']);
    expect(await store.poolsOfDevice(shared)).to.deep.equal([id('p1'), id('p2')]);
    expect(await store.poolsOfDevice(`none-${tag}`)).to.deep.equal([]);
  });

  it('When a definition breaks the rules, then PoolInputError names the field and nothing is written', async () => {
    const bad: [Parameters<PoolStore['create']>[0], string][] = [
      [{ id: 'Bad Id', name: 'n', devices: ['d-1'] }, 'id'],
      [{ id: id('bad'), name: ' ', devices: ['d-1'] }, 'name'],
      [{ id: id('bad'), name: 'x'.repeat(65), devices: ['d-1'] }, 'name'],
      [{ id: id('bad'), name: 'n', devices: [] }, 'devices'],
      [{ id: id('bad'), name: 'n', devices: ['d-1', 'd-1'] }, 'devices'],
      [{ id: id('bad'), name: 'n', devices: ['D 1'] }, 'devices'],
      [{ id: id('bad'), name: 'n', devices: Array.from({ length: 101 }, (_, i) => `d-${i}`) }, 'devices'],
    ];
    for (const [input, field] of bad) {
      const err = await store.create(input).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, JSON.stringify(input).slice(0, 80)).to.be.instanceOf(PoolInputError);
      expect((err as PoolInputError).field).to.equal(field);
    }
    expect(await redis.exists(keys.pool(id('bad')))).to.equal(0);
    expect(
      await store.create({
        id: id('bad'),
        name: 'n',
        devices: Array.from({ length: 100 }, (_, i) => `d-${i}`),
      }),
    )
      .to.have.property('devices')
      .with.length(100);
    made.push(id('bad'));
  });

  it('When a token is created for a pool, then its record keeps poolId, and deviceId with poolId is refused', async () => {
    const tokens = new TokenStore(redis);
    const { token } = await tokens.create({ name: 'pooled', poolId: id('alpha') });
    expect(token)
      .to.include({ poolId: id('alpha') })
      .and.not.to.have.property('deviceId');
    expect((await tokens.list()).find((t) => t.id === token.id)).to.deep.equal(token);
    await tokens.revoke(token.id);
    const both = await tokens.create({ name: 'both', poolId: id('alpha'), deviceId: 'd-1' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(both).to.be.instanceOf(Error);
  });
});

/**
 * On a Cluster the definition and the index live in different slots: each step is its own
 * command (or one-key script), so nothing here may need a cross-slot MULTI.
 */
describe('PoolStore on Redis Cluster (three masters)', function () {
  this.timeout(60_000);
  let cluster: ClusterHandle;
  let redis: Cluster;

  before(async () => {
    cluster = await startRedisCluster();
    redis = new Cluster(cluster.seeds.split(','));
  });
  after(async () => {
    await redis?.quit();
    await cluster?.stop();
  });

  it('When pools are created, changed, listed and deleted, then every step works across slots', async () => {
    const store = new PoolStore(redis);
    const ids = ['c-alpha', 'c-beta', 'c-gamma', 'c-delta'];
    for (const id of ids)
      expect(await store.create({ id, name: id, devices: ['d-1', id] })).to.include({ id });
    expect(await store.create({ id: 'c-alpha', name: 'again', devices: ['d-1'] })).to.equal('exists');
    expect((await store.list()).map((p) => p.id)).to.deep.equal([...ids].sort());
    expect((await store.update('c-beta', { devices: ['d-2'] }))!.devices).to.deep.equal(['d-2']);
    expect(await store.poolsOfDevice('d-1')).to.deep.equal(['c-alpha', 'c-delta', 'c-gamma']);
    expect(await store.delete('c-gamma')).to.equal(true);
    expect((await store.list()).map((p) => p.id)).to.deep.equal(['c-alpha', 'c-beta', 'c-delta']);
  });
});
