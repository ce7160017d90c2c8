import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { publishEvent } from '@mgw/store';
import { freshDeviceId, markConnected, type TestApi } from '../../../../test/helpers/api.js';
import {
  ADMIN_API_TOKEN,
  adminCall,
  signIn,
  startAdminApi,
  type AdminSessionClient,
} from '../../../../test/helpers/admin.js';
import { openSse } from '../../../../test/helpers/sse.js';
import { FEATURES } from '../../mounts.js';
import type { AdminRoute } from '../../../http/route-table.js';

const PASSWORD = 'a console password 1';

/**
 * The console's isolation matrix (docs/workspaces.md "The console"), taken from the route table
 * itself so that an admin route added later is in it: with workspace A's admin, A's agent and the
 * operator viewing A, every admin route that names a resource of workspace B (its device, pool or
 * workspace) answers 404 as for an id nobody has — or, for an agent on an admin's route, the same
 * 403 whatever it names — every operator route answers the base's 404 `Not found`, and the lists
 * (devices, pools, tokens, workspaces, users, the event stream) show A's only.
 */
describe('Admin API: a workspace console sees its own workspace only, over every admin route of the table', () => {
  let t: TestApi;
  const tag = randomBytes(3).toString('hex');
  const [a, b] = [`ca${tag}`, `cb${tag}`];
  const users = { admin: `admin-${tag}@a.test`, agent: `agent-${tag}@a.test`, other: `boss-${tag}@b.test` };
  let deviceA: string;
  let deviceB: string;
  const [poolA, poolB] = [`pa${tag}`, `pb${tag}`];
  let tokenIdA: string;
  let tokenIdB: string;
  const sessions: Record<'admin' | 'agent' | 'viewing', AdminSessionClient> = {} as never;

  const admins = FEATURES.flatMap((f) => f.routes).filter(
    (r): r is AdminRoute => r.surface === 'admin' && r.auth !== 'none',
  );
  /** A route's path with its ids filled: `ids` for the scoped ones, an id of the right look for the rest. */
  const concrete = (path: string, ids: { device: string; workspace: string; pool: string; user?: string }) =>
    path.replace(/:(\w+)/g, (_m, name: string) =>
      name === 'deviceId'
        ? ids.device
        : name === 'workspaceId'
          ? ids.workspace
          : name === 'poolId'
            ? ids.pool
            : name === 'user'
              ? (ids.user ?? users.agent)
              : /number|phone|chatId/i.test(name)
                ? '15550009999'
                : /messageId/.test(name)
                  ? '3EB0AAAAAAAAAAAAAAAAAAAA'
                  : 'x1',
    );
  const made = async (res: Promise<{ status: number; body: Record<string, unknown> }>, status = 201) => {
    const r = await res;
    expect(r.status, JSON.stringify(r.body)).to.equal(status);
    return r.body;
  };

  before(async () => {
    t = await startAdminApi();
    for (const id of [a, b])
      await made(adminCall(t, '/workspaces', { json: { id, name: `Customer ${id}` } }));
    deviceA = (
      (await made(adminCall(t, `/workspaces/${a}/devices`, { method: 'POST' }))).device as {
        deviceId: string;
      }
    ).deviceId;
    deviceB = (
      (await made(adminCall(t, `/workspaces/${b}/devices`, { method: 'POST' }))).device as {
        deviceId: string;
      }
    ).deviceId;
    await made(
      adminCall(t, '/pools', { json: { id: poolB, name: 'B pool', devices: [deviceB], workspace: b } }),
    );
    tokenIdB = (
      (await made(adminCall(t, `/workspaces/${b}/tokens`, { json: { name: 'b owner' } }))).token as {
        id: string;
      }
    ).id;
    for (const [user, ws, role] of [
      [users.admin, a, 'admin'],
      [users.agent, a, 'agent'],
      [users.other, b, 'admin'],
    ] as const)
      await made(adminCall(t, `/workspaces/${ws}/users`, { json: { user, password: PASSWORD, role } }));
    sessions.admin = await signIn(t, PASSWORD, users.admin);
    sessions.agent = await signIn(t, PASSWORD, users.agent);
    sessions.viewing = await signIn(t);
    await made(sessions.viewing.call('/session/workspace', { method: 'PUT', json: { workspaceId: a } }), 200);
    // A's own pool and token, made by A's admin.
    const pool = await made(
      sessions.admin.call('/pools', { json: { id: poolA, name: 'A pool', devices: [deviceA] } }),
    );
    expect(pool.pool).to.deep.include({ workspace: a, devices: [deviceA] });
    tokenIdA = (
      (await made(sessions.admin.call('/tokens', { json: { name: 'a sender', poolId: poolA } }))).token as {
        id: string;
      }
    ).id;
  });
  after(() => t.close());

  // quiet: 1300 ms (3 sessions × ~100 routes × 2 calls). The calls of a session go ten routes at
  // a time and the sessions side by side: one after another, the ~600 round trips each waited for
  // a loaded machine's scheduler, and the test outlived its 20 s on CI (16× its quiet time).
  it("When a console session calls any admin route naming B's device, pool or workspace, then 404 as for an id nobody has (an agent on an admin's route: the same 403)", async () => {
    const scoped = admins.filter((r) => /:(deviceId|workspaceId|poolId)\b/.test(r.path));
    expect(scoped.length, 'the routes that name a scoped id').to.be.greaterThan(80);
    const answers = async (session: AdminSessionClient, route: AdminRoute) => {
      const method = route.method.toUpperCase();
      const [theirs, nobodys] = await Promise.all([
        session.call(concrete(route.path, { device: deviceB, workspace: b, pool: poolB }), { method }),
        session.call(
          concrete(route.path, { device: freshDeviceId(), workspace: `n${tag}`, pool: `n${tag}` }),
          { method },
        ),
      ]);
      return { route, method, theirs, nobodys };
    };
    const checked = await Promise.all(
      Object.entries(sessions).map(async ([who, session]) => {
        const all = [];
        for (let i = 0; i < scoped.length; i += 10)
          all.push(...(await Promise.all(scoped.slice(i, i + 10).map((r) => answers(session, r)))));
        return all.map((answer) => ({ who, ...answer }));
      }),
    );
    for (const { who, route, method, theirs, nobodys } of checked.flat()) {
      const what = `${who}: ${method} ${route.path}`;
      const expected =
        route.console === undefined
          ? { status: 404, error: 'Not found' }
          : who === 'agent' && route.console === 'admin'
            ? { status: 403, error: 'Your role cannot do this' }
            : /:workspaceId\b/.test(route.path)
              ? { status: 404, error: 'Workspace not found' }
              : /:deviceId\b/.test(route.path)
                ? { status: 404, error: 'Device not found' }
                : { status: 404, error: 'Pool not found' };
      expect({ status: theirs.status, error: theirs.body.error }, what).to.deep.equal(expected);
      expect({ status: nobodys.status, body: nobodys.body }, `${what} (ids nobody has)`).to.deep.equal({
        status: theirs.status,
        body: theirs.body,
      });
    }
  });

  it('When a console session calls an operator route, then the base 404 `Not found` as for a path that does not exist; a method its paths lack, 405 naming its own', async () => {
    const operatorOnly = admins.filter((r) => r.console === undefined);
    expect(operatorOnly.map((r) => `${r.method} ${r.path}`)).to.include.members([
      'post /workspaces',
      'patch /workspaces/:workspaceId',
      'put /workspaces/:workspaceId/devices/:deviceId',
      'get /devices/:deviceId/proxy',
    ]);
    for (const [who, session] of Object.entries(sessions))
      for (const route of operatorOnly) {
        const res = await session.call(concrete(route.path, { device: deviceA, workspace: a, pool: poolA }), {
          method: route.method.toUpperCase(),
        });
        expect({ status: res.status, body: res.body }, `${who}: ${route.method} ${route.path}`).to.deep.equal(
          {
            status: 404,
            body: { success: false, error: 'Not found' },
          },
        );
      }
    const unknown = await sessions.admin.call('/no/such/path');
    expect(unknown.body).to.deep.equal({ success: false, error: 'Not found' });
    // A path whose every method is the operator's: 404 whatever the method; one it may use: 405.
    expect((await sessions.admin.call(`/devices/${deviceA}/proxy`, { method: 'PATCH' })).status).to.equal(
      404,
    );
    const put = await sessions.admin.call('/pools', { method: 'PUT' });
    expect(put.status).to.equal(405);
    expect(put.headers.get('allow')).to.equal('GET, HEAD, POST');
    // The operator's own view still has them.
    expect(
      (await adminCall(t, `/devices/${deviceA}/proxy`, { method: 'PATCH' })).headers.get('allow'),
    ).to.equal('GET, HEAD, PUT, DELETE');
  });

  it("When a console session lists devices, pools, tokens, workspaces and users, then A's only; the operator's own view lists both", async () => {
    for (const [who, session] of Object.entries(sessions)) {
      const devices = (await session.call('/devices')).body.devices as { deviceId: string }[];
      expect(
        devices.map((d) => d.deviceId),
        who,
      ).to.deep.equal([deviceA]);
      const pools = (await session.call('/pools')).body.pools as { id: string; workspace: string }[];
      expect(
        pools.map((p) => [p.id, p.workspace]),
        who,
      ).to.deep.equal([[poolA, a]]);
      const tokens = (await session.call('/tokens')).body.tokens as { id: string; kind: string }[];
      expect(
        tokens.map((x) => x.id),
        who,
      ).to.deep.equal([tokenIdA]);
      const workspaces = (await session.call('/workspaces')).body.workspaces as { id: string }[];
      expect(
        workspaces.map((w) => w.id),
        who,
      ).to.deep.equal([a]);
      expect((await session.call(`/workspaces/${a}`)).body.workspace, who).to.deep.include({
        id: a,
        devices: 1,
      });
      expect((await session.call(`/workspaces/${a}/devices`)).status, who).to.equal(200);
      expect((await session.call(`/workspaces/${a}/usage`)).status, who).to.equal(200);
    }
    const listed = await sessions.admin.call(`/workspaces/${a}/users`);
    expect((listed.body.users as { user: string }[]).map((u) => u.user)).to.deep.equal(
      [users.admin, users.agent].sort(),
    );
    expect(JSON.stringify(listed.body)).not.to.match(/scrypt|password/);
    const agentList = await sessions.agent.call(`/workspaces/${a}/users`);
    expect(agentList.body).to.deep.equal({ success: false, error: 'Your role cannot do this' });
    const all = (await adminCall(t, '/workspaces')).body.workspaces as { id: string }[];
    expect(all.map((w) => w.id)).to.include.members([a, b, 'default']);
    const allPools = (await adminCall(t, '/pools')).body.pools as { id: string }[];
    expect(allPools.map((p) => p.id)).to.include.members([poolA, poolB]);
  });

  it("When a console names B's token, device, pool or user in a body or an id, then each is refused as one nobody has; B's are untouched", async () => {
    const admin = sessions.admin;
    for (const id of [tokenIdB, 'tok_000000000000', 'adm_000000000000']) {
      const res = await admin.call(`/tokens/${id}`, { method: 'DELETE' });
      expect({ status: res.status, body: res.body }, id).to.deep.equal({
        status: 404,
        body: { success: false, error: 'Token not found' },
      });
    }
    for (const deviceId of [deviceB, freshDeviceId()]) {
      const token = await admin.call('/tokens', { json: { name: 'x', deviceId } });
      expect(token.status).to.equal(400);
      expect(token.body.error).to.equal('Device not found');
      const pool = await admin.call('/pools', {
        json: { id: `px${tag}`, name: 'x', devices: [deviceA, deviceId] },
      });
      expect(pool.status).to.equal(400);
      expect(pool.body).to.deep.include({ error: 'Device not found' });
      expect((pool.body.details as { path: unknown[] }[])[0]!.path).to.deep.equal(['devices', 1]);
      const patch = await admin.call(`/pools/${poolA}`, { method: 'PATCH', json: { devices: [deviceId] } });
      expect(patch.status).to.equal(400);
    }
    for (const poolId of [poolB, `n${tag}`]) {
      const token = await admin.call('/tokens', { json: { name: 'x', poolId } });
      expect({ status: token.status, error: token.body.error }).to.deep.equal({
        status: 400,
        error: 'Pool not found',
      });
    }
    const elsewhere = await admin.call('/pools', {
      json: { id: `py${tag}`, name: 'x', devices: [deviceA], workspace: b },
    });
    expect(elsewhere.status).to.equal(400);
    for (const user of [users.other, `nobody-${tag}`]) {
      const res = await admin.call(`/workspaces/${a}/users/${user}`, {
        method: 'PATCH',
        json: { role: 'agent' },
      });
      expect({ status: res.status, body: res.body }, user).to.deep.equal({
        status: 404,
        body: { success: false, error: 'User not found' },
      });
      expect((await admin.call(`/workspaces/${a}/users/${user}`, { method: 'DELETE' })).status).to.equal(404);
    }
    // B's still there, as they were.
    expect((await adminCall(t, `/pools/${poolB}`)).body.pool).to.deep.include({
      devices: [deviceB],
      workspace: b,
    });
    const bTokens = (await adminCall(t, '/tokens')).body.tokens as { id: string }[];
    expect(bTokens.map((x) => x.id)).to.include(tokenIdB);
    const bUsers = (await adminCall(t, `/workspaces/${b}/users`)).body.users as {
      user: string;
      role: string;
    }[];
    expect(bUsers).to.deep.equal([{ ...bUsers[0], user: users.other, role: 'admin' }]);
    expect((await adminCall(t, `/workspaces/${b}/devices`)).body.devices).to.deep.equal([
      { deviceId: deviceB, status: 'disconnected' },
    ]);
  });

  it("When a console follows every device's events, then it gets its own devices' only; another's device by name is 404", async () => {
    const url = `${t.url}/api/admin/v1/events/stream`;
    const refused = await sessions.agent.call(`/events/stream?device=${deviceB}`);
    expect({ status: refused.status, error: refused.body.error }).to.deep.equal({
      status: 404,
      error: 'Device not found',
    });
    const sse = await openSse(url, { cookie: sessions.agent.cookie });
    const all = await openSse(url, { authorization: `Bearer ${ADMIN_API_TOKEN}` });
    try {
      expect(sse.status).to.equal(200);
      await publishEvent(t.redis, deviceB, 'session.status', { deviceId: deviceB, status: 'connected' });
      await publishEvent(t.redis, deviceA, 'session.status', { deviceId: deviceA, status: 'connected' });
      await all.waitFor(2, 'session.status');
      const [event] = await sse.waitFor(1, 'session.status');
      expect(JSON.parse(event!.data)).to.deep.include({ deviceId: deviceA });
      await publishEvent(t.redis, deviceA, 'session.status', { deviceId: deviceA, status: 'disconnected' });
      await sse.waitFor(2, 'session.status');
      expect(sse.events.map((e) => (JSON.parse(e.data) as { deviceId: string }).deviceId)).to.deep.equal([
        deviceA,
        deviceA,
      ]);
    } finally {
      sse.close();
      all.close();
    }
  });

  it('When an agent changes something, then 403; it reads and answers a chat of its workspace', async () => {
    const agent = sessions.agent;
    for (const [path, method, json] of [
      [`/workspaces/${a}/devices`, 'POST', undefined],
      ['/tokens', 'POST', { name: 'x' }],
      [`/tokens/${tokenIdA}`, 'DELETE', undefined],
      ['/pools', 'POST', { id: `pz${tag}`, name: 'x', devices: [deviceA] }],
      [`/devices/${deviceA}/webhook`, 'PUT', { url: 'https://example.test/hook' }],
      [`/devices/${deviceA}/disconnect`, 'POST', undefined],
      [`/workspaces/${a}/users`, 'POST', { user: `x-${tag}`, password: PASSWORD, role: 'agent' }],
    ] as const) {
      const res = await agent.call(path, { method, json });
      expect({ status: res.status, body: res.body }, `${method} ${path}`).to.deep.equal({
        status: 403,
        body: { success: false, error: 'Your role cannot do this' },
      });
    }
    await markConnected(t.redis, deviceA);
    const reply = await agent.call(`/devices/${deviceA}/chats/15550001234/messages`, {
      json: { text: 'On it!' },
    });
    expect(reply.status, JSON.stringify(reply.body)).to.equal(202);
    expect((await agent.call(`/devices/${deviceA}/chats`)).status).to.equal(200);
    expect((await agent.call(`/devices/${deviceA}/messages`)).status).to.equal(200);
  });

  it("When A's admin creates a device, then it has a random id within A's quota; past the quota, 429 as the public route answers", async () => {
    await made(adminCall(t, `/workspaces/${a}`, { method: 'PATCH', json: { quotas: { devices: 2 } } }), 200);
    const second = await made(sessions.admin.call(`/workspaces/${a}/devices`, { method: 'POST' }));
    expect((second.device as { deviceId: string }).deviceId).to.match(/^d[0-9a-f]{16}$/);
    const third = await sessions.viewing.call(`/workspaces/${a}/devices`, { method: 'POST' });
    expect(third.status).to.equal(429);
    expect(third.body).to.deep.include({ error: 'Workspace quota reached' });
    expect((await sessions.admin.call('/devices')).body.devices).to.have.length(2);
  });
});
