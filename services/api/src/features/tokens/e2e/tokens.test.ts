import { expect } from 'chai';
import { ADMIN_TOKENS, TokenStore, hashToken } from '@mgw/store';
import { keys } from '@mgw/contracts';
import { call, freshDeviceId, type TestApi, createToken } from '../../../../test/helpers/api.js';
import {
  adminCall,
  signIn,
  startAdminApi,
  ADMIN_API_TOKEN,
  ADMIN_PASSWORD,
} from '../../../../test/helpers/admin.js';
import { lastLine, tokenCli } from '../../../../test/helpers/cli.js';

/**
 * The token capability's admin route tests (Settings → API), each against the real app and Redis:
 * - API tokens made, listed and revoked through the admin API;
 * - both kinds of token (API and admin) listed with when they were last used, revoked by id;
 * - admin API tokens of the token CLI (admin-create / admin-list / admin-revoke).
 */

describe('Admin API: tokens', () => {
  let t: TestApi;
  before(async () => {
    t = await startAdminApi();
  });
  after(() => t.close());

  it('When a token is created with a device and an expiry, then its value works once shown and is never listed', async () => {
    const admin = await signIn(t);
    const deviceId = freshDeviceId();
    const created = await admin.call('/tokens', {
      json: { name: 'shop backend', deviceId, expiresIn: '30d' },
    });
    expect(created.status).to.equal(201);
    expect(created.headers.get('cache-control')).to.equal('no-store');
    const value = String(created.body.value);
    expect(value).to.match(/^mgw_/);
    const token = created.body.token as Record<string, unknown>;
    expect(token).to.include({ name: 'shop backend', deviceId, expired: false });
    const days = (Date.parse(String(token.expiresAt)) - Date.parse(String(token.createdAt))) / 86_400_000;
    expect(days).to.equal(30);

    const status = await call(`${t.api}/status`, { token: value });
    expect(status.status).to.equal(200);

    const list = await admin.call('/tokens');
    const text = JSON.stringify(list.body);
    expect(text).not.to.include(value);
    const hash = await t.redis.hget('mgw:tokens', String(token.id));
    expect(text).not.to.include(String(hash));
    // As created, plus `lastUsedAt` once the /status call above has been recorded.
    const listed = (list.body.tokens as { id: string }[]).find((x) => x.id === token.id);
    expect(listed).to.deep.include(token);
  });

  it('When a token is revoked, then the public API answers 401 for it and the list no longer has it', async () => {
    const created = await adminCall(t, '/tokens', { json: { name: 'to revoke' } });
    const { id } = created.body.token as { id: string };
    const value = String(created.body.value);
    expect((await call(`${t.api}/status`, { token: value })).status).to.equal(200);
    const revoked = await adminCall(t, `/tokens/${id}`, { method: 'DELETE' });
    expect(revoked.status).to.equal(200);
    expect((await call(`${t.api}/status`, { token: value })).status).to.equal(401);
    const list = (await adminCall(t, '/tokens')).body.tokens as { id: string }[];
    expect(list.map((x) => x.id)).not.to.include(id);
    const again = await adminCall(t, `/tokens/${id}`, { method: 'DELETE' });
    expect(again.status).to.equal(404);
    expect(again.body).to.deep.equal({ success: false, error: 'Token not found' });
  });

  it('When the CLI rules are broken, then 400 names each field', async () => {
    const res = await adminCall(t, '/tokens', {
      json: { name: '', deviceId: 'Not A Slug', expiresIn: '30x', extra: 1 },
    });
    expect(res.status).to.equal(400);
    const paths = (res.body.details as { path: string[] }[]).map((d) => d.path.join('.'));
    expect(paths).to.have.members(['name', 'deviceId', 'expiresIn', 'extra']);
  });

  it('When the device is left empty, then the token acts on the default device', async () => {
    const res = await adminCall(t, '/tokens', { json: { name: 'default one', deviceId: '', expiresIn: '' } });
    expect(res.status).to.equal(201);
    expect(res.body.token).not.to.have.property('deviceId');
    expect(res.body.token).not.to.have.property('expiresAt');
  });
});

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

/**
 * Admin API tokens for automation: made by `npm run -s token -- admin-create`, kept hashed in Redis
 * apart from the API tokens, listed and revoked by id, checked against the sign-in budget.
 */
describe('Admin API tokens (token CLI admin-create / admin-list / admin-revoke)', function () {
  this.timeout(60_000);
  let t: TestApi;
  before(async () => (t = await startAdminApi()));
  after(() => t.close());

  it('When admin-create makes a token, then it opens the admin API without a session or CSRF token, admin-list shows it without its value, and admin-revoke ends it', async () => {
    const created = await tokenCli('admin-create', '--name', 'ci');
    expect(created.code, created.stderr).to.equal(0);
    const value = lastLine(created.stdout);
    expect(value).to.match(/^mgwadm_[A-Za-z0-9_-]{43}$/);
    const id = /adm_[0-9a-f]{12}/.exec(created.stdout)?.[0];
    expect(id, created.stdout).to.be.a('string');

    const made = await adminCall(t, '/tokens', { json: { name: 'made-by-ci' }, token: value });
    expect(made.status).to.equal(201);
    expect((await adminCall(t, '/session', { token: value })).body).to.deep.equal({
      success: true,
      via: 'token',
      tokenId: id,
      role: 'operator',
    });
    // Redis holds its hash, never its value.
    const stored = await t.redis.keys('mgw:admin:token:*');
    expect(stored).to.include(`mgw:admin:token:${hashToken(value)}`);
    for (const k of stored) expect(JSON.stringify(await t.redis.hgetall(k))).not.to.include(value);

    const listed = await tokenCli('admin-list');
    expect(listed.code).to.equal(0);
    expect(listed.stdout.split('\n').find((l) => l.startsWith(id!))).to.match(
      // CREATED, LAST USED (noted in the background: a time, or never yet), EXPIRES, EXPIRED.
      /ci\s+\S+Z\s+(\S+Z|never)\s+never\s+no$/,
    );
    expect(listed.stdout).not.to.include(value);
    expect((await tokenCli('list')).stdout, 'API tokens list').not.to.include(id!);

    const revoked = await tokenCli('admin-revoke', id!);
    expect(revoked.code).to.equal(0);
    expect(revoked.stdout).to.include(`Revoked admin token ${id}`);
    const after = await adminCall(t, '/tokens', { token: value });
    expect(after.status).to.equal(401);
    expect(after.body).to.deep.equal({ success: false, error: 'Admin authentication required' });
    expect((await tokenCli('admin-list')).stdout).not.to.include(id!);
  });

  it('When an API token knocks on the admin API, or an admin token on the public API, then each is refused with 401', async () => {
    const apiToken = await createToken(t);
    expect((await adminCall(t, '/devices', { token: apiToken })).status).to.equal(401);
    const admin = lastLine((await tokenCli('admin-create', '--name', 'not-public')).stdout);
    const res = await call(`${t.api}/status`, { token: admin });
    expect(res.status).to.equal(401);
    expect(res.body).to.deep.equal({ success: false, error: 'Invalid API token' });
  });

  it('When an admin token expires, then the admin API refuses it and admin-list marks it expired', async () => {
    const created = await tokenCli('admin-create', '--name', 'short', '--expires-in', '1s');
    const value = lastLine(created.stdout);
    const expiresAt = /expires: (\S+)\)/.exec(created.stdout)![1]!;
    expect((await adminCall(t, '/devices', { token: value })).status).to.equal(200);
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(expiresAt) - Date.now()) + 20));
    expect((await adminCall(t, '/devices', { token: value })).status).to.equal(401);
    const id = /adm_[0-9a-f]{12}/.exec(created.stdout)![0];
    expect((await tokenCli('admin-list')).stdout.split('\n').find((l) => l.startsWith(id))).to.match(/yes$/);
  });

  it('When right admin tokens call in parallel past the limit, they pass; when wrong ones use up the sign-in limit, then every bearer call and sign-in from that IP gets 429 until the window ends', async () => {
    const limited = await startAdminApi({
      admin: {
        password: ADMIN_PASSWORD,
        apiToken: ADMIN_API_TOKEN,
        sessionTtlSeconds: 3600,
        signInLimit: 3,
        signInWindowMs: 60_000,
      },
    });
    try {
      await limited.redis.del('mgw:admin:signin-failures:127.0.0.1');
      const good = lastLine((await tokenCli('admin-create', '--name', 'good')).stdout);
      // A right token spends nothing: many calls, even in parallel, never add up to the limit.
      const parallel = await Promise.all(
        Array.from({ length: 12 }, () => adminCall(limited, '/devices', { token: good })),
      );
      expect(parallel.map((r) => r.status)).to.deep.equal(Array(12).fill(200));
      for (let i = 0; i < 3; i++) {
        expect((await adminCall(limited, '/devices', { token: `mgwadm_guess${i}` })).status).to.equal(401);
      }
      const blocked = await adminCall(limited, '/devices', { token: good });
      expect(blocked.status).to.equal(429);
      expect(blocked.body.error).to.equal('Too many failed sign-in attempts');
      expect(blocked.body.resetIn).to.be.within(1, 60);
      expect((await adminCall(limited, '/devices')).status, 'ADMIN_API_TOKEN too').to.equal(429);
      const signIn = await call(`${limited.url}/api/admin/v1/session`, {
        json: { password: ADMIN_PASSWORD },
      });
      expect(signIn.status).to.equal(429);
    } finally {
      await limited.redis.del('mgw:admin:signin-failures:127.0.0.1');
      await limited.close();
    }
  });

  it('When admin-create is given a device, or admin-revoke no id, then a clear error and a non-zero exit', async () => {
    const [withDevice, noId, missing] = await Promise.all([
      tokenCli('admin-create', '--name', 'x', '--device', 'shop'),
      tokenCli('admin-revoke'),
      tokenCli('admin-revoke', 'adm_000000000000'),
    ]);
    expect(withDevice.code).to.not.equal(0);
    expect(withDevice.stderr).to.include('admin-create takes no --device');
    expect(noId.code).to.not.equal(0);
    expect(noId.stderr).to.include('admin-revoke takes exactly one token id');
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.include('no admin token with id adm_000000000000');
  });
});
