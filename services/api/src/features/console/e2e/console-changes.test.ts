import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import type { TestApi } from '../../../../test/helpers/api.js';
import { adminCall, signIn, startAdminApi, type AdminSessionClient } from '../../../../test/helpers/admin.js';

const PASSWORD = 'a console password 1';
const ENDED = { status: 401, body: { success: false, error: 'Admin authentication required' } };

/**
 * Two ways a console could reach past its workspace (docs/security.md "Tenants: the ways a
 * workspace's data could leave"): the operator's "open as" shows exactly the workspace's admin
 * view and no more, and a console session ends with the user it was: demoted, its password
 * changed, deleted — and its name taken again in another workspace revives nothing.
 */
describe("Admin API: the operator's view of a workspace, and console sessions after their user changes", () => {
  let t: TestApi;
  const tag = randomBytes(3).toString('hex');
  const [a, b] = [`cca${tag}`, `ccb${tag}`];
  const name = (n: string) => `${n}-${tag}@cc.test`;
  const devices: Record<string, string> = {};
  const answer = async (
    s: AdminSessionClient,
    path: string,
    opts: { method?: string; json?: unknown } = {},
  ) => {
    const r = await s.call(path, opts);
    return { status: r.status, body: r.body };
  };
  const addUser = async (user: string, role: 'admin' | 'agent', workspace: string) => {
    const res = await adminCall(t, `/workspaces/${workspace}/users`, {
      json: { user, password: PASSWORD, role },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
  };

  before(async () => {
    t = await startAdminApi();
    for (const id of [a, b]) {
      expect((await adminCall(t, '/workspaces', { json: { id, name: id } })).status).to.equal(201);
      const made = await adminCall(t, `/workspaces/${id}/devices`, { method: 'POST' });
      devices[id] = (made.body.device as { deviceId: string }).deviceId;
      await adminCall(t, `/workspaces/${id}/tokens`, { json: { name: `${id} owner` } });
      await addUser(name(`${id}-admin`), 'admin', id);
    }
    const pool = await adminCall(t, '/pools', {
      json: { id: `ccp${tag}`, name: 'b pool', devices: [devices[b]], workspace: b },
    });
    expect(pool.status).to.equal(201);
  });
  after(() => t.close());

  it("When the operator opens A, then every list and every refusal is what A's admin gets, B is out of reach; it returns to its own view, and neither a user nor a token can open one", async () => {
    const operator = await signIn(t);
    const admin = await signIn(t, PASSWORD, name(`${a}-admin`));
    const opened = await operator.call('/session/workspace', { method: 'PUT', json: { workspaceId: a } });
    expect(opened.status).to.equal(200);
    const same = [
      '/workspaces',
      `/workspaces/${a}`,
      `/workspaces/${a}/users`,
      `/workspaces/${a}/devices`,
      '/devices',
      '/pools',
      '/tokens',
      `/devices/${devices[a]}`,
      `/workspaces/${b}`,
      `/workspaces/${b}/users`,
      `/workspaces/${b}/devices`,
      `/devices/${devices[b]}`,
      `/devices/${devices[b]}/messages`,
      `/pools/ccp${tag}`,
      '/events/stream?device=' + devices[b],
    ];
    for (const path of same) {
      const [seen, theirs] = [await answer(operator, path), await answer(admin, path)];
      expect(seen, path).to.deep.equal(theirs);
    }
    const text = JSON.stringify(
      await Promise.all(['/workspaces', '/devices', '/pools', '/tokens'].map((p) => answer(operator, p))),
    );
    for (const id of [b, devices[b]!, `ccp${tag}`]) expect(text).to.not.include(id);
    // Changes naming B: refused as A's admin is refused, and B unchanged.
    for (const [path, json] of [
      [`/workspaces/${b}/users`, { user: name('intruder'), password: PASSWORD, role: 'admin' }],
      ['/tokens', { name: 'steal', deviceId: devices[b] }],
      ['/pools', { id: `ccq${tag}`, name: 'steal', devices: [devices[b]] }],
    ] as const) {
      const [seen, theirs] = [
        await answer(operator, path, { method: 'POST', json }),
        await answer(admin, path, { method: 'POST', json }),
      ];
      expect(seen, path).to.deep.equal(theirs);
      expect(seen.status, path).to.be.oneOf([400, 404]);
    }
    expect((await adminCall(t, `/workspaces/${b}/users`)).body.users).to.have.length(1);

    const back = await operator.call('/session/workspace', { method: 'DELETE' });
    expect(back.body).to.deep.include({ role: 'operator' });
    expect((await answer(operator, `/devices/${devices[b]}`)).status).to.equal(200);
    expect(JSON.stringify((await operator.call('/workspaces')).body)).to.include(b);

    const byUser = await answer(admin, '/session/workspace', { method: 'PUT', json: { workspaceId: b } });
    expect(byUser).to.deep.equal({ status: 404, body: { success: false, error: 'Not found' } });
    expect((await answer(admin, `/devices/${devices[b]}`)).status).to.equal(404);
    const byToken = await adminCall(t, '/session/workspace', { method: 'PUT', json: { workspaceId: a } });
    expect(byToken.status).to.equal(403);
  });

  it('When an admin is made an agent, then its session ends; signed in again, its next change is refused 403', async () => {
    const user = name('demoted');
    await addUser(user, 'admin', a);
    const before = await signIn(t, PASSWORD, user);
    expect((await answer(before, '/tokens', { method: 'POST', json: { name: 'ok' } })).status).to.equal(201);
    const demoted = await adminCall(t, `/workspaces/${a}/users/${user}`, {
      method: 'PATCH',
      json: { role: 'agent' },
    });
    expect(demoted.status).to.equal(200);
    expect(await answer(before, '/tokens', { method: 'POST', json: { name: 'after' } })).to.deep.equal(ENDED);
    const agent = await signIn(t, PASSWORD, user);
    expect(await answer(agent, '/tokens', { method: 'POST', json: { name: 'after' } })).to.deep.equal({
      status: 403,
      body: { success: false, error: 'Your role cannot do this' },
    });
    expect((await answer(agent, '/devices')).status).to.equal(200);
  });

  it('When a user is deleted and its name made again in workspace B, then the old session stays ended: it never opens B', async () => {
    const user = name('reborn');
    await addUser(user, 'admin', a);
    const old = await signIn(t, PASSWORD, user);
    const pwChanged = await signIn(t, PASSWORD, user);
    await adminCall(t, `/workspaces/${a}/users/${user}`, {
      method: 'PATCH',
      json: { password: 'another password 2' },
    });
    expect(await answer(pwChanged, '/devices')).to.deep.equal(ENDED);
    const again = await signIn(t, 'another password 2', user);
    expect((await adminCall(t, `/workspaces/${a}/users/${user}`, { method: 'DELETE' })).status).to.equal(200);
    await addUser(user, 'admin', b);
    for (const s of [old, pwChanged, again])
      for (const path of ['/session', '/devices', `/devices/${devices[b]}`, `/workspaces/${b}/users`])
        expect(await answer(s, path), path).to.deep.equal(ENDED);
    // The name signs in to B afresh: B's own session, B's view.
    const inB = await signIn(t, PASSWORD, user);
    expect((await inB.call('/session')).body).to.deep.include({ role: 'admin', user });
    expect(((await inB.call('/session')).body.workspace as { id: string }).id).to.equal(b);
    expect((await answer(inB, `/devices/${devices[a]}`)).status).to.equal(404);
  });
});
