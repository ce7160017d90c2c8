import { expect } from 'chai';
import { API_TOKENS, TokenStore, WORKSPACE_CEILINGS, type WorkspaceRecord } from '@mgw/store';
import { MemoryRedis } from '../test-support.js';
import {
  createDevice,
  createWorkspaceToken,
  listDevices,
  listWorkspaceTokens,
  revokeWorkspaceToken,
  showDevice,
  showWorkspace,
  type WorkspaceDeps,
} from './workspaces.js';

/**
 * A workspace's use cases over an in-memory ownership (the store's scripts are faked as the narrow
 * interface the use cases take) and tokens over an in-memory Redis: no Redis, no API.
 */
describe("Workspaces: a workspace's devices and tokens, and none of another's (in memory)", () => {
  let owners: Map<string, string>;
  let deps: WorkspaceDeps;
  const record = (id: string, devices?: number): WorkspaceRecord => ({
    id,
    name: id,
    status: 'active',
    quotas: devices === undefined ? {} : { devices },
    createdAt: '2026-11-28T00:00:00.000Z',
    updatedAt: '2026-11-28T00:00:00.000Z',
  });
  const records = new Map([
    ['acme', record('acme', 2)],
    ['globex', record('globex')],
  ]);

  beforeEach(() => {
    owners = new Map();
    const devicesOf = (ws: string) =>
      [...owners]
        .filter(([, w]) => w === ws)
        .map(([d]) => d)
        .sort();
    deps = {
      workspaces: {
        get: async (id) => records.get(id),
        devices: async (ws) => devicesOf(ws),
        hasDevice: async (ws, d) => devicesOf(ws).includes(d),
        workspaceOf: async (d) => owners.get(d) ?? 'default',
        ceilings: WORKSPACE_CEILINGS,
        tokenLimit: (ws) => (ws === 'default' ? Number.MAX_SAFE_INTEGER : WORKSPACE_CEILINGS.tokens),
        addDevice: async (ws, d) => {
          const w = records.get(ws);
          if (!w) return 'no_workspace';
          if (owners.has(d)) return owners.get(d) === ws ? 'added' : 'taken';
          if (w.quotas.devices !== undefined && devicesOf(ws).length >= w.quotas.devices) return 'quota';
          owners.set(d, ws);
          return 'added';
        },
      },
      sessions: { get: async () => ({ status: 'disconnected' }) },
      tokens: workspaceTokens(
        new TokenStore(new MemoryRedis().client, { ...API_TOKENS, workspaceIndex: undefined }),
      ),
    };
  });

  /**
   * The token store with its workspace index faked (its count-and-add is a script): a workspace's
   * tokens are those of the store that name it, and `limit` is held against their number.
   */
  let tokenLimit = Number.MAX_SAFE_INTEGER;
  const workspaceTokens = (store: TokenStore): WorkspaceDeps['tokens'] => ({
    get: (id) => store.get(id),
    revoke: (id) => store.revoke(id),
    listWorkspace: async (ws) => (await store.list()).filter((t) => t.workspaceId === ws),
    createWithin: async (input, limit) => {
      const held = (await store.list()).filter((t) => t.workspaceId === input.workspaceId).length;
      return held >= Math.min(limit, tokenLimit) ? 'limit' : store.create(input);
    },
  });

  it('When a workspace creates devices, then each id is random, listed as its own, and the quota refuses one more', async () => {
    const one = await createDevice(deps, 'acme');
    const two = await createDevice(deps, 'acme');
    if (typeof one === 'string' || typeof two === 'string') throw new Error('refused');
    expect(one.deviceId)
      .to.match(/^d[0-9a-f]{16}$/)
      .and.not.equal(two.deviceId);
    expect(await createDevice(deps, 'acme')).to.equal('quota');
    expect(await createDevice(deps, 'nobody')).to.equal('no_workspace');
    expect((await listDevices(deps, 'acme')).map((d) => d.deviceId)).to.have.members([
      one.deviceId,
      two.deviceId,
    ]);
    expect(await showWorkspace(deps, 'acme')).to.deep.include({ id: 'acme', devices: 2 });
    expect(await showWorkspace(deps, 'nobody')).to.equal(undefined);
    expect(await showDevice(deps, 'acme', one.deviceId)).to.deep.equal({
      deviceId: one.deviceId,
      status: 'disconnected',
    });
    expect(await showDevice(deps, 'globex', one.deviceId), "another's device").to.equal(undefined);
  });

  it("When a workspace mints tokens, then they carry it; another's device is refused; lists and revocations see its own only", async () => {
    const made = await createDevice(deps, 'acme');
    if (typeof made === 'string') throw new Error('refused');
    const device = await createWorkspaceToken(deps, 'acme', {
      name: 'shop',
      deviceId: made.deviceId,
      expiresIn: '1h',
    });
    const workspace = await createWorkspaceToken(deps, 'globex', { name: 'owner' });
    if (typeof device === 'string' || typeof workspace === 'string') throw new Error('refused');
    expect(device.token).to.deep.include({ workspaceId: 'acme', deviceId: made.deviceId });
    expect(workspace.token).to.deep.include({ workspaceId: 'globex' });
    expect(workspace.token).to.not.have.property('deviceId');
    expect(await createWorkspaceToken(deps, 'globex', { name: 'x', deviceId: made.deviceId })).to.equal(
      'device_not_found',
    );
    expect((await listWorkspaceTokens(deps, 'acme')).map((t) => t.id)).to.deep.equal([device.token.id]);
    expect(JSON.stringify(await listWorkspaceTokens(deps, 'acme'))).to.not.include(device.value);
    expect(await revokeWorkspaceToken(deps, 'globex', device.token.id)).to.equal('not_found');
    expect(await revokeWorkspaceToken(deps, 'acme', device.token.id)).to.equal('revoked');
    expect(await listWorkspaceTokens(deps, 'acme')).to.deep.equal([]);
  });

  it("When a workspace mints a token for a pool, then only for a pool of its own; another's pool and one nobody has are pool_not_found", async () => {
    const pools = new Map([
      ['acme-pool', 'acme'],
      ['globex-pool', 'globex'],
    ]);
    const withPools: WorkspaceDeps = { ...deps, pools: { workspaceOf: async (id) => pools.get(id) } };
    const made = await createWorkspaceToken(withPools, 'acme', { name: 'sender', poolId: 'acme-pool' });
    if (typeof made === 'string') throw new Error('refused');
    expect(made.token).to.deep.include({ workspaceId: 'acme', poolId: 'acme-pool' });
    for (const poolId of ['globex-pool', 'no-pool'])
      expect(await createWorkspaceToken(withPools, 'acme', { name: 'x', poolId }), poolId).to.equal(
        'pool_not_found',
      );
    expect(
      await createWorkspaceToken(deps, 'acme', { name: 'x', poolId: 'acme-pool' }),
      'no pools known',
    ).to.equal('pool_not_found');
  });

  it("When a workspace holds as many tokens as it may, then one more is refused ('limit'); default's are not bounded", async () => {
    tokenLimit = 2;
    try {
      for (const name of ['a', 'b'])
        expect(await createWorkspaceToken(deps, 'acme', { name })).to.not.be.a('string');
      expect(await createWorkspaceToken(deps, 'acme', { name: 'c' })).to.equal('limit');
      expect(await createWorkspaceToken(deps, 'globex', { name: 'a' })).to.not.be.a('string');
    } finally {
      tokenLimit = Number.MAX_SAFE_INTEGER;
    }
  });
});
