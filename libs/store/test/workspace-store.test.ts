import { expect } from 'chai';
import { closeRedis, createLogger, createRedis, waitForRedis } from '@mgw/common';
import { DEFAULT_WORKSPACE, keys } from '@mgw/contracts';
import { Redis } from 'ioredis';
import { SessionStore, SuspendedWorkspaces, TokenStore, WorkspaceStore } from '../src/index.js';

describe('WorkspaceStore: workspaces, their device quota and who owns a device (real Redis)', () => {
  let redis: Redis;
  let store: WorkspaceStore;
  // The suite's Redis is shared: ids of this run only.
  const tag = `${process.pid}-${Date.now() % 100000}`;
  const id = (name: string) => `${name}-${tag}`;

  before(async () => {
    redis = createRedis(process.env.REDIS_URL!, 'producer', 'test-workspaces');
    await waitForRedis(redis);
    store = new WorkspaceStore(redis);
  });
  after(async () => {
    await closeRedis(redis);
  });

  it('When a workspace is created twice at once, then one is made and the other is told it exists; the list and get show it', async () => {
    const ws = id('acme');
    const both = await Promise.all([
      store.create({ id: ws, name: 'Acme', quotas: { devices: 3, messagesPerDay: 1000 } }),
      store.create({ id: ws, name: 'Acme again' }),
    ]);
    expect(both.filter((r) => r === 'exists')).to.have.length(1);
    const got = await store.get(ws);
    expect(got).to.deep.include({ id: ws, status: 'active' });
    expect(got!.quotas).to.deep.equal(got!.name === 'Acme' ? { devices: 3, messagesPerDay: 1000 } : {});
    expect((await store.list()).map((w) => w.id)).to.include(ws);
    expect(await store.get('Not An Id')).to.equal(undefined);
  });

  it('When devices are added at once past the quota, then exactly the quota is taken; the map names the owner; another workspace cannot take them', async () => {
    const ws = id('quota');
    const other = id('other');
    await store.create({ id: ws, name: 'Q', quotas: { devices: 3 } });
    await store.create({ id: other, name: 'O' });
    const devices = Array.from({ length: 8 }, (_, i) => `q${i}-${tag}`);
    const answers = await Promise.all(devices.map((d) => store.addDevice(ws, d)));
    expect(answers.filter((a) => a === 'added')).to.have.length(3);
    expect(answers.filter((a) => a === 'quota')).to.have.length(5);
    const owned = await store.devices(ws);
    expect(owned).to.have.length(3);
    for (const d of owned) {
      expect(await store.workspaceOf(d)).to.equal(ws);
      expect(await store.addDevice(ws, d), 'a retry').to.equal('added');
      expect(await store.addDevice(other, d), 'taken by another').to.equal('taken');
    }
    expect(await store.addDevice(id('nobody'), `x-${tag}`)).to.equal('no_workspace');
    // Raised quota: room again; removed from the workspace: default's again.
    await store.update(ws, { quotas: { devices: null } });
    expect(
      await store.addDevice(
        ws,
        devices.find((d) => !owned.includes(d))!,
      ),
    ).to.equal('added');
    expect(await store.removeDevice(ws, owned[0]!)).to.equal(true);
    expect(await store.workspaceOf(owned[0]!)).to.equal(DEFAULT_WORKSPACE);
  });

  it("When an install from before workspaces is adopted, then its linked devices and its tokens' devices are default's, listed, and no other workspace can take them", async () => {
    const linked = `old-linked-${tag}`;
    const withSession = `old-session-${tag}`;
    await redis.sadd(keys.linkedDevices(), linked);
    await new SessionStore(redis).update(withSession, 'connected', { phone: '15550001111' });
    const { token } = await new TokenStore(redis).create({ name: 'old', deviceId: `old-token-${tag}` });
    expect(token).to.not.have.property('workspaceId');
    await store.adopt([token.deviceId!]);
    await store.adopt([token.deviceId!]);
    const listed = await store.devices(DEFAULT_WORKSPACE);
    expect(listed).to.include.members([linked, token.deviceId!]);
    expect(await store.workspaceOf(linked)).to.equal(DEFAULT_WORKSPACE);
    const ws = id('grab');
    await store.create({ id: ws, name: 'G' });
    for (const d of [linked, withSession, token.deviceId!])
      expect(await store.addDevice(ws, d), d).to.equal('taken');
    await redis.srem(keys.linkedDevices(), linked);
    await redis.del(keys.session(withSession));
  });

  it('When a workspace is suspended, then its record says so and a change is published for the caches', async () => {
    const ws = id('susp');
    await store.create({ id: ws, name: 'S' });
    const sub = new Redis(process.env.REDIS_URL!);
    const heard: string[] = [];
    await sub.subscribe(keys.workspacesChannel());
    sub.on('message', (_c, m) => heard.push(m));
    const changed = await store.update(ws, { status: 'suspended', name: 'S2' });
    expect(changed).to.deep.include({ status: 'suspended', name: 'S2' });
    for (let i = 0; i < 50 && !heard.includes(ws); i++) await new Promise((r) => setTimeout(r, 20));
    expect(heard).to.include(ws);
    expect(await store.update(id('none'), { status: 'suspended' })).to.equal(undefined);
    sub.disconnect();
  });

  it('When a sender watches the statuses, then a device of a suspended workspace reads suspended within moments, and not after the resume; default is never', async () => {
    const ws = id('watch');
    await store.create({ id: ws, name: 'W' });
    const device = `watch-d-${tag}`;
    await store.addDevice(ws, device);
    const sub = new Redis(process.env.REDIS_URL!);
    const watch = new SuspendedWorkspaces(redis, sub, createLogger({ level: 'error', service: 'test' }));
    await watch.start();
    const until = async (want: boolean) => {
      for (let i = 0; i < 100 && (await watch.deviceSuspended(device)) !== want; i++) {
        await new Promise((r) => setTimeout(r, 20));
      }
      return watch.deviceSuspended(device);
    };
    expect(await watch.deviceSuspended(device)).to.equal(false);
    await store.update(ws, { status: 'suspended' });
    expect(await until(true)).to.equal(true);
    expect(await watch.deviceSuspended(`nobody-${tag}`), "a device of default's").to.equal(false);
    await store.update(ws, { status: 'active' });
    expect(await until(false)).to.equal(false);
    // A device the sender knew as default's, then given to a suspended workspace: read again.
    const later = `watch-later-${tag}`;
    expect(await watch.deviceSuspended(later)).to.equal(false);
    await store.update(ws, { status: 'suspended' });
    expect(await until(true)).to.equal(true);
    expect(await store.addDevice(ws, later)).to.equal('added');
    for (let i = 0; i < 100 && !(await watch.deviceSuspended(later)); i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(await watch.deviceSuspended(later)).to.equal(true);
    await watch.stop();
    sub.disconnect();
  });
});
