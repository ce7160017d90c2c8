import { expect } from 'chai';
import { hashToken } from '@mgw/store';
import { call, createToken, type TestApi } from '../../../../test/helpers/api.js';
import { ADMIN_API_TOKEN, ADMIN_PASSWORD, adminCall, startAdminApi } from '../../../../test/helpers/admin.js';
import { lastLine, tokenCli } from '../../../../test/helpers/cli.js';

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
