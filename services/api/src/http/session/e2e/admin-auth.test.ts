import { expect } from 'chai';
import { call, createToken, type TestApi } from '../../../../test/helpers/api.js';
import { ADMIN_API_TOKEN, adminCall, signIn, startAdminApi } from '../../../../test/helpers/admin.js';

describe('Admin API: sign-in, sessions, CSRF and the automation token', () => {
  let t: TestApi;
  before(async () => {
    t = await startAdminApi();
  });
  after(() => t.close());

  it('When the password is right, then the answer sets an HttpOnly SameSite=Strict cookie and gives a CSRF token', async () => {
    const res = await call(`${t.url}/api/admin/v1/session`, {
      json: { password: 'correct horse battery staple' },
    });
    expect(res.status).to.equal(200);
    const cookie = res.headers.get('set-cookie') ?? '';
    expect(cookie).to.match(/^mgw_admin=[\w-]{43}; /);
    expect(cookie).to.include('HttpOnly').and.include('SameSite=Strict').and.include('Path=/');
    expect(cookie, 'plain HTTP: not Secure').not.to.include('Secure');
    expect(res.body).to.include({ success: true, via: 'session' });
    expect(res.body.csrfToken).to.be.a('string').with.length(43);
  });

  it('When the session id is looked for in Redis, then only its hash is there, with an expiry', async () => {
    const admin = await signIn(t);
    const id = admin.cookie.split('=')[1]!;
    const keys = await t.redis.keys('mgw:admin:session:*');
    expect(keys.join(' ')).not.to.include(id);
    const csrfTokens = await Promise.all(keys.map((k) => t.redis.hget(k, 'csrfToken')));
    expect(csrfTokens).to.include(admin.csrfToken);
    for (const k of keys) expect(await t.redis.ttl(k)).to.be.within(1, 3600);
  });

  it('When a request comes over TLS at a trusted proxy, then the cookie is Secure and __Host- prefixed', async () => {
    const proxied = await startAdminApi({ trustProxy: true });
    try {
      const res = await call(`${proxied.url}/api/admin/v1/session`, {
        json: { password: 'correct horse battery staple' },
        headers: { 'x-forwarded-proto': 'https' },
      });
      expect(res.headers.get('set-cookie')).to.match(/^__Host-mgw_admin=.*; Secure$/);
    } finally {
      await proxied.close();
    }
  });

  it('When the password is wrong, then 401 and no cookie', async () => {
    const res = await call(`${t.url}/api/admin/v1/session`, { json: { password: 'wrong password!' } });
    expect(res.status).to.equal(401);
    expect(res.body).to.deep.equal({ success: false, error: 'Invalid admin password' });
    expect(res.headers.get('set-cookie')).to.equal(null);
  });

  it('When a signed-in page changes something without its CSRF token, then 403 and nothing changes', async () => {
    const admin = await signIn(t);
    const refused = await admin.call('/tokens', { json: { name: 'csrf-less' }, csrf: false });
    expect(refused.status).to.equal(403);
    expect(refused.body.error).to.equal('Missing or invalid CSRF token');
    const list = await admin.call('/tokens');
    expect((list.body.tokens as { name: string }[]).map((x) => x.name)).not.to.include('csrf-less');
    const wrong = await call(`${t.url}/api/admin/v1/tokens`, {
      json: { name: 'csrf-wrong' },
      headers: { cookie: admin.cookie, 'x-csrf-token': 'x'.repeat(43) },
    });
    expect(wrong.status).to.equal(403);
  });

  it('When a signed-in page reads, then no CSRF token is needed; signing out ends the session', async () => {
    const admin = await signIn(t);
    expect((await admin.call('/session', { csrf: false })).status).to.equal(200);
    const out = await admin.call('/session', { method: 'DELETE' });
    expect(out.status).to.equal(200);
    expect(out.headers.get('set-cookie')).to.match(/^mgw_admin=; .*Max-Age=0/);
    expect((await admin.call('/session')).status).to.equal(401);
  });

  it('When automation presents the admin token, then it is served without a session or CSRF token', async () => {
    const res = await adminCall(t, '/tokens', { json: { name: 'from-automation' } });
    expect(res.status).to.equal(201);
    expect((await adminCall(t, '/session')).body).to.deep.equal({
      success: true,
      via: 'token',
      role: 'operator',
    });
    const wrong = await adminCall(t, '/tokens', { token: `${ADMIN_API_TOKEN}x` });
    expect(wrong.status).to.equal(401);
  });

  it('When a stranger calls any admin route without credentials, then every answer is 401', async () => {
    const token = (await adminCall(t, '/tokens', { json: { name: 'victim' } })).body.token as { id: string };
    const publicToken = await createToken(t);
    const attempts: [string, string, unknown?][] = [
      ['GET', '/session'],
      ['DELETE', '/session'],
      ['GET', '/tokens'],
      ['POST', '/tokens', { name: 'x' }],
      ['DELETE', `/tokens/${token.id}`],
      ['GET', '/devices'],
      ['GET', '/devices/default'],
      ['POST', '/devices/default/connect', {}],
      ['POST', '/devices/default/disconnect'],
      ['GET', '/devices/default/messages'],
      ['GET', '/devices/default/messages/some-id'],
      ['GET', '/nothing-here'],
      ['PUT', '/tokens'],
    ];
    for (const [method, path, json] of attempts) {
      const res = await call(`${t.url}/api/admin/v1${path}`, { method, json });
      expect(res.status, `${method} ${path}`).to.equal(401);
      expect(res.body, `${method} ${path}`).to.deep.equal({
        success: false,
        error: 'Admin authentication required',
      });
      const forged = await call(`${t.url}/api/admin/v1${path}`, {
        method,
        json,
        headers: { cookie: 'mgw_admin=forged' },
      });
      expect(forged.status, `${method} ${path} forged cookie`).to.equal(401);
      // An API token is no admin credential.
      const apiToken = await call(`${t.url}/api/admin/v1${path}`, { method, json, token: publicToken });
      expect(apiToken.status, `${method} ${path} API token`).to.equal(401);
    }
    expect((await adminCall(t, '/tokens')).body.tokens, 'nothing was revoked').to.deep.include(token);
  });

  it('When an IP fails sign-in past the limit, then it gets 429 even with the right password until the window ends', async () => {
    const limited = await startAdminApi({
      admin: {
        password: 'correct horse battery staple',
        sessionTtlSeconds: 3600,
        signInLimit: 3,
        signInWindowMs: 60_000,
      },
    });
    try {
      await limited.redis.del('mgw:admin:signin-failures:127.0.0.1');
      const attempt = (password: string) =>
        call(`${limited.url}/api/admin/v1/session`, { json: { password } });
      const tries = await Promise.all(Array.from({ length: 6 }, () => attempt('not the password')));
      const statuses = tries.map((r) => r.status).sort();
      expect(statuses, 'parallel guesses cannot outrun the count').to.deep.equal([
        401, 401, 401, 429, 429, 429,
      ]);
      const right = await attempt('correct horse battery staple');
      expect(right.status).to.equal(429);
      expect(right.body.error).to.equal('Too many failed sign-in attempts');
      expect(right.body.resetIn).to.be.within(1, 60);
    } finally {
      await limited.redis.del('mgw:admin:signin-failures:127.0.0.1');
      await limited.close();
    }
  });

  it('When neither ADMIN_PASSWORD nor ADMIN_API_TOKEN is set, then the admin API and the dashboard do not exist', async () => {
    const off = await startAdminApi({
      admin: { sessionTtlSeconds: 3600, signInLimit: 10, signInWindowMs: 60_000 },
    });
    try {
      expect((await call(`${off.url}/api/admin/v1/session`, { json: { password: 'x' } })).status).to.equal(
        404,
      );
      expect((await call(`${off.url}/api/admin/v1/tokens`, { token: ADMIN_API_TOKEN })).status).to.equal(404);
      const page = await fetch(`${off.url}/dashboard/devices`);
      expect(page.status).to.equal(404);
      expect(await page.text()).to.include('set ADMIN_PASSWORD');
    } finally {
      await off.close();
    }
  });
});
