import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { keys } from '@mgw/contracts';
import { waitFor } from '@mgw/testing';
import { call, type TestApi } from '../../../../test/helpers/api.js';
import { ADMIN_API_TOKEN, adminCall, signIn, startAdminApi } from '../../../../test/helpers/admin.js';

const PASSWORD = 'a console password 1';

/**
 * The console's sign-in and sessions (docs/workspaces.md "The console"): a workspace's users sign in
 * with a name and a password, one refusal for a wrong name or password, under the operator's
 * sign-in limit; a session says who it is; changing or removing a user ends its sessions; the
 * operator opens a workspace as it sees itself, and returns.
 */
describe('Admin API: console users sign in, their sessions, and the operator viewing a workspace', () => {
  let t: TestApi;
  const tag = randomBytes(3).toString('hex');
  const ws = `cs${tag}`;
  const name = (n: string) => `${n}-${tag}@cs.test`;
  const session = (path = '/session', json?: unknown) => call(`${t.url}/api/admin/v1${path}`, { json });

  const addUser = async (user: string, role: 'admin' | 'agent', workspace = ws) => {
    const res = await adminCall(t, `/workspaces/${workspace}/users`, {
      json: { user, password: PASSWORD, role },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.user;
  };

  before(async () => {
    t = await startAdminApi();
    expect((await adminCall(t, '/workspaces', { json: { id: ws, name: 'Console Ltd' } })).status).to.equal(
      201,
    );
  });
  after(() => t.close());

  it('When a user signs in, then the session says its role, workspace and name; the password is kept only as a scrypt hash, and never logged', async () => {
    const added = await addUser(name('ann'), 'admin');
    expect(added).to.deep.include({ user: name('ann'), workspace: ws, role: 'admin' });
    const signedIn = await session('/session', { user: name('ann').toUpperCase(), password: PASSWORD });
    expect(signedIn.status, JSON.stringify(signedIn.body)).to.equal(200);
    expect(signedIn.headers.get('set-cookie')).to.match(/^mgw_admin=[\w-]{43}; /);
    expect(signedIn.body).to.deep.include({
      success: true,
      via: 'session',
      role: 'admin',
      workspace: { id: ws, name: 'Console Ltd' },
      user: name('ann'),
    });
    expect(signedIn.body).not.to.have.property('viewing');
    const ann = await signIn(t, PASSWORD, name('ann'));
    expect((await ann.call('/session')).body).to.deep.include({ role: 'admin', user: name('ann') });
    const record = await t.redis.hgetall(keys.consoleUser(name('ann')));
    expect(record.password).to.match(/^scrypt\$15\$8\$1\$/);
    expect(JSON.stringify(record)).not.to.include(PASSWORD);
    expect(JSON.stringify(t.logs)).not.to.include(PASSWORD);
    expect(JSON.stringify(t.logs)).to.include(name('ann'));
  });

  it('When the name or the password is wrong, then the same 401, no cookie; an operator password with a user name is no sign-in', async () => {
    await addUser(name('bob'), 'agent');
    const answers = [];
    for (const json of [
      { user: name('bob'), password: 'not the password' },
      { user: name('nobody'), password: PASSWORD },
      { user: 'NOT A NAME!', password: PASSWORD },
      { user: name('bob'), password: 'correct horse battery staple' },
    ]) {
      const res = await session('/session', json);
      expect(res.headers.get('set-cookie'), JSON.stringify(json)).to.equal(null);
      answers.push({ status: res.status, body: res.body });
    }
    for (const answer of answers)
      expect(answer).to.deep.equal({
        status: 401,
        body: { success: false, error: 'Invalid user name or password' },
      });
    const bad = await session('/session', { user: name('bob') });
    expect(bad.status).to.equal(400);
  });

  it('When a user is removed, or its password or role changed, then its sessions end at once', async () => {
    await addUser(name('cat'), 'agent');
    const first = await signIn(t, PASSWORD, name('cat'));
    const second = await signIn(t, PASSWORD, name('cat'));
    const changed = await adminCall(t, `/workspaces/${ws}/users/${name('cat')}`, {
      method: 'PATCH',
      json: { role: 'admin' },
    });
    expect(changed.body.user).to.deep.include({ role: 'admin' });
    for (const s of [first, second]) expect((await s.call('/session')).status).to.equal(401);
    const again = await signIn(t, PASSWORD, name('cat'));
    expect((await again.call('/session')).body.role).to.equal('admin');
    await adminCall(t, `/workspaces/${ws}/users/${name('cat')}`, {
      method: 'PATCH',
      json: { password: 'a new password 22' },
    });
    expect((await again.call('/session')).status).to.equal(401);
    expect((await session('/session', { user: name('cat'), password: PASSWORD })).status).to.equal(401);
    const latest = await signIn(t, 'a new password 22', name('cat'));
    expect(
      (await adminCall(t, `/workspaces/${ws}/users/${name('cat')}`, { method: 'DELETE' })).status,
    ).to.equal(200);
    expect((await latest.call('/session')).body).to.deep.equal({
      success: false,
      error: 'Admin authentication required',
    });
    expect((await session('/session', { user: name('cat'), password: 'a new password 22' })).status).to.equal(
      401,
    );
    expect(await t.redis.exists(keys.consoleUserSessions(name('cat')))).to.equal(0);
  });

  it('When a workspace admin manages users, then a name taken anywhere is 409, a weak password 400 (never echoed), and it cannot remove or demote itself', async () => {
    await addUser(name('dan'), 'admin');
    const dan = await signIn(t, PASSWORD, name('dan'));
    const other = `co${tag}`;
    expect((await adminCall(t, '/workspaces', { json: { id: other, name: 'Other' } })).status).to.equal(201);
    await addUser(name('taken'), 'agent', other);
    const taken = await dan.call(`/workspaces/${ws}/users`, {
      json: { user: name('taken'), password: PASSWORD, role: 'agent' },
    });
    expect({ status: taken.status, body: taken.body }).to.deep.equal({
      status: 409,
      body: { success: false, error: 'User name is taken' },
    });
    const weak = await dan.call(`/workspaces/${ws}/users`, {
      json: { user: name('eve'), password: 'short pw', role: 'agent' },
    });
    expect(weak.status).to.equal(400);
    expect(JSON.stringify(weak.body)).to.include('12 to 1024').and.not.include('short pw');
    const lone = await dan.call(`/workspaces/${ws}/users`, {
      json: { user: name('eve'), password: 'twelve chars\ud800', role: 'agent' },
    });
    expect(lone.status).to.equal(400);
    const badName = await dan.call(`/workspaces/${ws}/users`, {
      json: { user: 'x', password: PASSWORD, role: 'agent' },
    });
    expect(badName.status).to.equal(400);
    expect(
      (
        await dan.call(`/workspaces/${ws}/users`, {
          json: { user: name('eve'), password: PASSWORD, role: 'boss' },
        })
      ).status,
    ).to.equal(400);
    const self = `/workspaces/${ws}/users/${name('dan')}`;
    for (const [method, json] of [
      ['DELETE', undefined],
      ['PATCH', { role: 'agent' }],
    ] as const) {
      const res = await dan.call(self, { method, json });
      expect(res.status, method).to.equal(409);
    }
    const own = await dan.call(self, { method: 'PATCH', json: { password: 'my own new password' } });
    expect(own.status).to.equal(200);
    expect((await dan.call('/session')).status, 'its own session ended with the change').to.equal(401);
    // The operator may remove anyone.
    expect((await adminCall(t, self, { method: 'DELETE' })).status).to.equal(200);
  });

  it('When the operator opens a workspace, then its session is that workspace’s admin view until it returns; a user session and a token cannot', async () => {
    const operator = await signIn(t);
    expect((await operator.call('/session')).body).to.deep.include({ role: 'operator' });
    const csrfLess = await operator.call('/session/workspace', {
      method: 'PUT',
      json: { workspaceId: ws },
      csrf: false,
    });
    expect(csrfLess.status).to.equal(403);
    const unknown = await operator.call('/session/workspace', {
      method: 'PUT',
      json: { workspaceId: `zz${tag}` },
    });
    expect({ status: unknown.status, body: unknown.body }).to.deep.equal({
      status: 404,
      body: { success: false, error: 'Workspace not found' },
    });
    expect(
      (await operator.call('/session/workspace', { method: 'PUT', json: { workspaceId: 'NOT AN ID' } }))
        .status,
    ).to.equal(400);
    const opened = await operator.call('/session/workspace', { method: 'PUT', json: { workspaceId: ws } });
    expect(opened.body).to.deep.include({
      role: 'admin',
      workspace: { id: ws, name: 'Console Ltd' },
      viewing: true,
    });
    expect(opened.body).not.to.have.property('user');
    expect((await operator.call('/session')).body).to.deep.include({ role: 'admin', viewing: true });
    expect(((await operator.call('/workspaces')).body.workspaces as unknown[]).length).to.equal(1);
    const back = await operator.call('/session/workspace', { method: 'DELETE' });
    expect(back.body).to.deep.include({ role: 'operator' });
    expect(back.body).not.to.have.property('workspace');
    expect(((await operator.call('/workspaces')).body.workspaces as unknown[]).length).to.be.greaterThan(1);

    await addUser(name('fay'), 'admin');
    const fay = await signIn(t, PASSWORD, name('fay'));
    const byUser = await fay.call('/session/workspace', { method: 'PUT', json: { workspaceId: ws } });
    expect({ status: byUser.status, body: byUser.body }).to.deep.equal({
      status: 404,
      body: { success: false, error: 'Not found' },
    });
    const byToken = await adminCall(t, '/session/workspace', { method: 'PUT', json: { workspaceId: ws } });
    expect(byToken.status).to.equal(403);
    expect((await adminCall(t, '/session')).body).to.deep.equal({
      success: true,
      via: 'token',
      role: 'operator',
    });
  });

  it("When a user's workspace is suspended, then its console is refused (403) but for its session; the operator viewing it is not", async () => {
    await addUser(name('gil'), 'agent');
    const gil = await signIn(t, PASSWORD, name('gil'));
    const operator = await signIn(t);
    await operator.call('/session/workspace', { method: 'PUT', json: { workspaceId: ws } });
    await adminCall(t, `/workspaces/${ws}`, { method: 'PATCH', json: { status: 'suspended' } });
    try {
      // Every API process drops the cached record when the change is heard.
      await waitFor(async () => (await gil.call('/devices')).status === 403, { timeoutMs: 5000 });
      const refused = await gil.call('/devices');
      expect({ status: refused.status, body: refused.body }).to.deep.equal({
        status: 403,
        body: { success: false, error: 'This workspace is suspended' },
      });
      expect((await gil.call('/session')).status).to.equal(200);
      expect((await operator.call('/devices')).status).to.equal(200);
    } finally {
      await adminCall(t, `/workspaces/${ws}`, { method: 'PATCH', json: { status: 'active' } });
    }
    await waitFor(async () => (await gil.call('/devices')).status === 200, { timeoutMs: 5000 });
  });

  it("When a pool token is not of its pool's workspace, then the public API refuses it (401); the operator's tokens for a workspace's pool or device are that workspace's", async () => {
    const poolId = `cp${tag}`;
    const device = (
      (await adminCall(t, `/workspaces/${ws}/devices`, { method: 'POST' })).body.device as {
        deviceId: string;
      }
    ).deviceId;
    expect(
      (await adminCall(t, '/pools', { json: { id: poolId, name: 'p', devices: [device], workspace: ws } }))
        .status,
    ).to.equal(201);
    // A token of the shape from before workspaces (default's) left on this pool.
    const { value } = await t.services.tokens.create({ name: 'stale', poolId });
    const res = await call(`${t.api}/send`, {
      method: 'POST',
      token: value,
      json: { to: '15550001111', text: 'hi' },
    });
    expect(res.status).to.equal(401);
    // The operator's token for the pool is the pool's workspace's.
    const made = await adminCall(t, '/tokens', { json: { name: 'right', poolId } });
    expect(made.body.token).to.deep.include({ poolId, workspaceId: ws });
    // So is its token for one of the workspace's devices.
    const forDevice = await adminCall(t, '/tokens', { json: { name: 'device', deviceId: device } });
    expect(forDevice.body.token).to.deep.include({ deviceId: device, workspaceId: ws });
  });

  it('When failed sign-ins of a client pass the limit, then users and the operator alike get 429, the right password too', async () => {
    const limited = await startAdminApi({
      admin: {
        password: 'correct horse battery staple',
        apiToken: ADMIN_API_TOKEN,
        sessionTtlSeconds: 3600,
        signInLimit: 3,
        signInWindowMs: 60_000,
      },
    });
    try {
      await limited.redis.del('mgw:admin:signin-failures:127.0.0.1');
      await adminCall(limited, `/workspaces/${ws}/users`, {
        json: { user: name('hal'), password: PASSWORD, role: 'agent' },
      });
      const attempt = (json: unknown) => call(`${limited.url}/api/admin/v1/session`, { json });
      const statuses = [];
      for (const json of [
        { user: name('hal'), password: 'wrong password 1' },
        { password: 'wrong operator password' },
        { user: name('nobody'), password: 'wrong password 2' },
        { user: name('hal'), password: PASSWORD },
        { password: 'correct horse battery staple' },
      ])
        statuses.push((await attempt(json)).status);
      expect(statuses).to.deep.equal([401, 401, 401, 429, 429]);
    } finally {
      await limited.redis.del('mgw:admin:signin-failures:127.0.0.1');
      await limited.close();
    }
  });

  it('When only ADMIN_API_TOKEN is set, then users sign in and the dashboard is served; the operator password sign-in stays 404', async () => {
    const tokenOnly = await startAdminApi({
      admin: {
        apiToken: ADMIN_API_TOKEN,
        sessionTtlSeconds: 3600,
        signInLimit: 1000,
        signInWindowMs: 60_000,
      },
    });
    try {
      await adminCall(tokenOnly, `/workspaces/${ws}/users`, {
        json: { user: name('ivy'), password: PASSWORD, role: 'agent' },
      });
      const ivy = await signIn(tokenOnly, PASSWORD, name('ivy'));
      expect((await ivy.call('/session')).body).to.deep.include({
        role: 'agent',
        workspace: { id: ws, name: 'Console Ltd' },
      });
      const operator = await call(`${tokenOnly.url}/api/admin/v1/session`, {
        json: { password: 'anything' },
      });
      expect(operator.status).to.equal(404);
      expect((await fetch(`${tokenOnly.url}/dashboard/devices`)).status).not.to.equal(404);
    } finally {
      await tokenOnly.close();
    }
  });
});
