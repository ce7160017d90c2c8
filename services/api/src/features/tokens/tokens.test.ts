import { expect } from 'chai';
import { ADMIN_TOKENS, API_TOKENS, PoolStore, TokenStore, type PoolRecord } from '@mgw/store';
import { MemoryRedis } from '../test-support.js';
import { createToken, kindOfId, listTokens, revokeToken, tokenView, type TokenStores } from './tokens.js';

/** The admin API's tokens without an API: both token stores and the pools over an in-memory Redis. */
describe('Tokens: list, create and revoke both kinds (stores over an in-memory Redis)', () => {
  let redis: MemoryRedis;
  let stores: TokenStores;
  let pools: PoolStore;

  beforeEach(() => {
    redis = new MemoryRedis();
    stores = { api: new TokenStore(redis.client), admin: new TokenStore(redis.client, ADMIN_TOKENS) };
    pools = new PoolStore(redis.client);
  });

  it('When a token is created, then its value is shown once and its view never shows the value; a pool must exist', async () => {
    const made = await createToken(stores.api, pools, { name: 'shop', deviceId: 'd-1', expiresIn: '1h' });
    if (made === 'pool_not_found' || made === 'limit') throw new Error('no pool asked');
    expect(made.value).to.be.a('string').and.not.equal('');
    const view = tokenView(made.token);
    expect(view).to.deep.include({ kind: 'api', name: 'shop', deviceId: 'd-1', expired: false });
    expect(Date.parse(view.expiresAt!) - Date.now()).to.be.within(3_500_000, 3_600_000);
    expect(JSON.stringify(view)).not.to.include(made.value);
    expect(await createToken(stores.api, pools, { name: 'p', poolId: 'no-such-pool' })).to.equal(
      'pool_not_found',
    );
    expect(tokenView(made.token, new Date(Date.now() + 7_200_000)).expired, 'an hour later').to.equal(true);
  });

  it('When tokens are listed, then both kinds, the most recently used first, then the never used ones newest first', async () => {
    const a = (await createToken(stores.api, pools, { name: 'a' })) as { token: { id: string } };
    const b = (await createToken(stores.api, pools, { name: 'b' })) as { token: { id: string } };
    const listed = await listTokens(stores);
    expect(listed.map((t) => t.kind)).to.deep.equal(['api', 'api']);
    expect(listed.map((t) => t.id).sort()).to.deep.equal([a.token.id, b.token.id].sort());
  });

  it('When a token is revoked, then by the kind its id names; an unknown or overlong id is not_found', async () => {
    const made = (await createToken(stores.api, pools, { name: 'a' })) as { token: { id: string } };
    expect(kindOfId(made.token.id)).to.equal('api');
    expect(kindOfId('adm_0123456789ab')).to.equal('admin');
    expect(await revokeToken(stores, made.token.id)).to.deep.equal({ kind: 'api' });
    // The API processes are told to forget its cached validity at once.
    expect(redis.published).to.have.length(1);
    expect(await revokeToken(stores, made.token.id)).to.equal('not_found');
    expect(await revokeToken(stores, 'x'.repeat(65))).to.equal('not_found');
    expect(await listTokens(stores)).to.deep.equal([]);
  });

  it("When a token is made for a pool or a device of a workspace other than default, then it is that workspace's token; default's keep the old shape", async () => {
    // The workspace's own index is a script's (its count and add): left out here.
    const tokens = new TokenStore(redis.client, { ...API_TOKENS, workspaceIndex: undefined });
    const pool = (id: string, workspace: string): PoolRecord => ({
      id,
      name: id,
      devices: ['d-1'],
      workspace,
      otpFallback: false,
      createdAt: '',
      updatedAt: '',
    });
    const known = new Map([
      ['acme-pool', pool('acme-pool', 'acme')],
      ['old-pool', pool('old-pool', 'default')],
    ]);
    const fakePools = { get: async (id: string) => known.get(id) };
    const acme = await createToken(tokens, fakePools, { name: 'acme sends', poolId: 'acme-pool' });
    expect(acme).to.have.nested.property('token.workspaceId', 'acme');
    expect(acme).to.have.nested.property('token.poolId', 'acme-pool');
    const old = await createToken(tokens, fakePools, { name: 'old sends', poolId: 'old-pool' });
    expect(old).to.have.nested.property('token.poolId', 'old-pool');
    expect(old).not.to.have.nested.property('token.workspaceId');
    // A device of a workspace: that workspace's token; default's (or none known): the old shape.
    const devices = { ownerOf: async (d: string) => (d === 'acme-1' ? 'acme' : 'default') };
    const device = await createToken(tokens, fakePools, { name: 'acme device', deviceId: 'acme-1' }, devices);
    expect(device).to.have.nested.property('token.workspaceId', 'acme');
    const own = await createToken(tokens, fakePools, { name: 'own device', deviceId: 'shop-1' }, devices);
    expect(own).not.to.have.nested.property('token.workspaceId');
  });
});
