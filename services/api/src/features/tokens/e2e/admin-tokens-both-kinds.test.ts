import { expect } from 'chai';
import { ADMIN_TOKENS, TokenStore, hashToken } from '@mgw/store';
import { keys } from '@mgw/contracts';
import { call, freshDeviceId, type TestApi } from '../../../../test/helpers/api.js';
import { adminCall, signIn, startAdminApi } from '../../../../test/helpers/admin.js';

/** Polls `get` until it answers something (written in the background), up to 5 s. */
async function eventually<T>(get: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const got = await get();
    if (got !== undefined) return got;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

interface Listed {
  kind: 'api' | 'admin';
  id: string;
  name: string;
  deviceId?: string;
  createdAt: string;
  expiresAt?: string;
  expired: boolean;
  lastUsedAt?: string;
}

/**
 * Settings → API lists both kinds of token: API tokens (public API) and admin tokens (admin API,
 * made by the token CLI), each with its kind and when it was last used; either kind is revoked by
 * its id (`tok_…` or `adm_…`).
 */
describe('Admin API: tokens of both kinds, with when they were last used', function () {
  this.timeout(60_000);
  let t: TestApi;
  let admins: TokenStore;
  before(async () => {
    t = await startAdminApi();
    admins = new TokenStore(t.redis, ADMIN_TOKENS);
  });
  after(() => t.close());

  const list = async (): Promise<Listed[]> => {
    const res = await adminCall(t, '/tokens');
    expect(res.status).to.equal(200);
    return res.body.tokens as Listed[];
  };

  it('When an API token and an admin token are each used, then GET /tokens lists both with their kind and lastUsedAt, the used first, and no value or hash', async () => {
    const deviceId = freshDeviceId();
    const api = await t.services.tokens.create({ name: 'both-api', deviceId });
    const admin = await admins.create({ name: 'both-admin', expiresInMs: 86_400_000 });
    const unused = await t.services.tokens.create({ name: 'both-unused' });

    const before = await list();
    expect(before.find((x) => x.id === api.token.id)).to.deep.equal({
      kind: 'api',
      id: api.token.id,
      name: 'both-api',
      deviceId,
      createdAt: api.token.createdAt,
      expired: false,
    });
    expect(before.find((x) => x.id === admin.token.id)).to.deep.equal({
      kind: 'admin',
      id: admin.token.id,
      name: 'both-admin',
      createdAt: admin.token.createdAt,
      expiresAt: admin.token.expiresAt,
      expired: false,
    });

    const start = Date.now();
    expect((await call(`${t.api}/status`, { token: api.value })).status).to.equal(200);
    expect((await adminCall(t, '/devices', { token: admin.value })).status).to.equal(200);
    // Written in the background: the answer does not wait for it.
    const listed = await eventually(async () => {
      const l = await list();
      const a = l.find((x) => x.id === api.token.id);
      const b = l.find((x) => x.id === admin.token.id);
      return a?.lastUsedAt && b?.lastUsedAt ? l : undefined;
    });
    const usedApi = listed.find((x) => x.id === api.token.id)!;
    const usedAdmin = listed.find((x) => x.id === admin.token.id)!;
    for (const used of [usedApi, usedAdmin]) {
      expect(Date.parse(used.lastUsedAt!)).to.be.within(start - 1000, Date.now() + 1000);
    }
    expect(listed.find((x) => x.id === unused.token.id)).not.to.have.property('lastUsedAt');
    // The most recently used first; never-used ones after every used one.
    const ids = listed.map((x) => x.id);
    expect(ids.indexOf(unused.token.id)).to.be.greaterThan(ids.indexOf(api.token.id));
    expect(ids.indexOf(unused.token.id)).to.be.greaterThan(ids.indexOf(admin.token.id));
    expect(ids.indexOf(admin.token.id), 'admin token used last').to.be.lessThan(ids.indexOf(api.token.id));

    const text = JSON.stringify(listed);
    for (const secret of [api.value, admin.value, hashToken(api.value), hashToken(admin.value)]) {
      expect(text).not.to.include(secret);
    }
    expect(
      JSON.stringify(await t.redis.hgetall(keys.adminTokenByHash(hashToken(admin.value)))),
    ).not.to.include(admin.value);
  });

  it('When a token is used many times within a minute, then its lastUsedAt is written once', async () => {
    const { value } = await t.services.tokens.create({ name: 'many uses' });
    const key = keys.tokenByHash(hashToken(value));
    expect((await call(`${t.api}/status`, { token: value })).status).to.equal(200);
    const first = await eventually(async () => (await t.redis.hget(key, 'lastUsedAt')) ?? undefined);
    await new Promise((r) => setTimeout(r, 20));
    for (let i = 0; i < 5; i++)
      expect((await call(`${t.api}/status`, { token: value })).status).to.equal(200);
    await new Promise((r) => setTimeout(r, 100));
    expect(await t.redis.hget(key, 'lastUsedAt')).to.equal(first);
  });

  it('When DELETE /tokens/:id names an admin token, then it is revoked (even the caller’s own) and answers 401 afterwards', async () => {
    const own = await admins.create({ name: 'revokes itself' });
    const other = await admins.create({ name: 'revoked by session' });

    // The admin token revokes itself: the answer is 200, its next call 401.
    const self = await adminCall(t, `/tokens/${own.token.id}`, { method: 'DELETE', token: own.value });
    expect(self.status).to.equal(200);
    expect(self.body).to.deep.equal({ success: true });
    const after = await adminCall(t, '/tokens', { token: own.value });
    expect(after.status).to.equal(401);
    expect(after.body).to.deep.equal({ success: false, error: 'Admin authentication required' });

    // From a dashboard session (cookie and CSRF token).
    expect((await adminCall(t, '/devices', { token: other.value })).status).to.equal(200);
    const session = await signIn(t);
    const revoked = await session.call(`/tokens/${other.token.id}`, { method: 'DELETE' });
    expect(revoked.status).to.equal(200);
    expect((await adminCall(t, '/devices', { token: other.value })).status).to.equal(401);
    const ids = (await list()).map((x) => x.id);
    expect(ids).not.to.include(own.token.id);
    expect(ids).not.to.include(other.token.id);
    expect(await admins.list()).not.to.deep.include(other.token);

    const again = await adminCall(t, `/tokens/${other.token.id}`, { method: 'DELETE' });
    expect(again.status).to.equal(404);
    expect(again.body).to.deep.equal({ success: false, error: 'Token not found' });
  });

  it('When ids are routed by prefix, then an API token id never reaches the admin space nor the other way round', async () => {
    const api = await t.services.tokens.create({ name: 'prefix-api' });
    const admin = await admins.create({ name: 'prefix-admin' });
    expect(api.token.id).to.match(/^tok_[0-9a-f]{12}$/);
    expect(admin.token.id).to.match(/^adm_[0-9a-f]{12}$/);
    // An admin-looking id that is no admin token: 404, and the API token is untouched.
    const wrong = await adminCall(t, `/tokens/adm_${api.token.id.slice(4)}`, { method: 'DELETE' });
    expect(wrong.status).to.equal(404);
    expect(wrong.body).to.deep.equal({ success: false, error: 'Token not found' });
    expect((await call(`${t.api}/status`, { token: api.value })).status).to.equal(200);

    const revoked = await adminCall(t, `/tokens/${api.token.id}`, { method: 'DELETE' });
    expect(revoked.status).to.equal(200);
    expect((await call(`${t.api}/status`, { token: api.value })).status).to.equal(401);
    expect((await adminCall(t, '/devices', { token: admin.value })).status).to.equal(200);
  });
});
