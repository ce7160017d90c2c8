import { expect } from 'chai';
import { closeRedis, createRedis, waitForRedis } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { Redis } from 'ioredis';
import { ConsoleUserStore, PoolStore } from '../src/index.js';

describe("ConsoleUserStore: a workspace's console users, unique in the install, and their sessions (real Redis)", () => {
  let redis: Redis;
  let store: ConsoleUserStore;
  // The suite's Redis is shared: names of this run only.
  const tag = `${process.pid}-${Date.now() % 100000}`;
  const name = (n: string) => `${n}-${tag}`;
  const hash = 'scrypt$15$8$1$AAAAAAAAAAAAAAAAAAAAAA==$BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB=';

  before(async () => {
    redis = createRedis(process.env.REDIS_URL!, 'producer', 'test-console-users');
    await waitForRedis(redis);
    store = new ConsoleUserStore(redis);
  });
  after(async () => {
    await closeRedis(redis);
  });

  it('When one name is created at once in two workspaces, then one user is made, the other is told it is taken and is not listed', async () => {
    const user = name('ann@acme.test');
    const [a, b] = [name('acme'), name('globex')];
    const both = await Promise.all([
      store.create({ user, workspace: a, role: 'admin', password: hash }),
      store.create({ user, workspace: b, role: 'agent', password: hash }),
    ]);
    expect(both.filter((r) => r === 'taken')).to.have.length(1);
    const made = await store.get(user);
    const owner = made!.workspace;
    const loser = owner === a ? b : a;
    expect((await store.list(owner)).map((u) => u.user)).to.deep.equal([user]);
    expect(await store.list(loser)).to.deep.equal([]);
    expect(await redis.sismember(keys.workspaceUsers(loser), user)).to.equal(0);
    // Taken again in its own workspace: still listed there.
    expect(await store.create({ user, workspace: owner, role: 'agent', password: hash })).to.equal('taken');
    expect((await store.list(owner)).map((u) => u.user)).to.deep.equal([user]);
    expect(await store.get('Not A Name')).to.equal(undefined);
  });

  it('When a user is changed, then its stamp is new; a deleted user is not brought back by a change', async () => {
    const user = name('bob');
    const made = await store.create({ user, workspace: name('acme'), role: 'agent', password: hash });
    if (made === 'taken' || made === 'full') throw new Error(made);
    const changed = await store.update(user, { role: 'admin' });
    expect(changed).to.deep.include({ user, role: 'admin', password: hash, createdAt: made.createdAt });
    expect(changed!.stamp).not.to.equal(made.stamp);
    expect(await store.delete(user)).to.deep.include({ user });
    expect(await store.update(user, { password: hash })).to.equal(undefined);
    expect(await redis.exists(keys.consoleUser(user))).to.equal(0);
    expect(await store.list(name('acme'))).to.satisfy((l: { user: string }[]) =>
      l.every((u) => u.user !== user),
    );
  });

  it("When a user's sessions are ended, then each session key it listed is deleted, and its list with it", async () => {
    const user = name('cat');
    await store.create({ user, workspace: name('acme'), role: 'agent', password: hash });
    for (const h of ['a'.repeat(64), 'b'.repeat(64)]) {
      await redis.hset(keys.adminSession(h), { csrfToken: 'x' });
      await store.noteSession(user, h, 60);
    }
    expect(await redis.ttl(keys.consoleUserSessions(user))).to.be.within(1, 60);
    expect(await store.endSessions(user)).to.equal(2);
    expect(await redis.exists(keys.adminSession('a'.repeat(64)), keys.consoleUserSessions(user))).to.equal(0);
    await store.delete(user);
  });

  it("When a listed name's record is gone or another workspace's, then the list drops it", async () => {
    const ws = name('stale');
    await redis.sadd(keys.workspaceUsers(ws), name('ghost'));
    expect(await store.list(ws)).to.deep.equal([]);
    expect(await redis.scard(keys.workspaceUsers(ws))).to.equal(0);
  });

  it("When a pool is made for a workspace, then its record says so; one from before pools had a workspace is default's", async () => {
    const pools = new PoolStore(redis);
    const id = `cu-pool-${Date.now() % 100000}`;
    const made = await pools.create({ id, name: 'p', devices: ['d-1'], workspace: name('acme') });
    expect(made).to.deep.include({ workspace: name('acme') });
    expect(await pools.workspaceOf(id)).to.equal(name('acme'));
    await redis.hdel(keys.pool(id), 'workspace');
    expect(await pools.get(id)).to.deep.include({ workspace: 'default' });
    expect(await pools.workspaceOf(id)).to.equal('default');
    await pools.delete(id);
    expect(await pools.workspaceOf(id)).to.equal(undefined);
  });
});
