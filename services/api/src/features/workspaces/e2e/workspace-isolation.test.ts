import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { call, markConnected, type TestApi } from '../../../../test/helpers/api.js';
import { adminCall, startAdminApi } from '../../../../test/helpers/admin.js';
import { FEATURES } from '../../mounts.js';
import type { ApiRoute } from '../../../http/route-table.js';
import { isWorkspaceRoute } from '../../../http/auth.js';

/**
 * The isolation matrix (docs/workspaces.md), taken from the route table itself so that a route
 * added later is in it: every public route that acts on a device, called for workspace B's device
 * with workspace A's token (a workspace token and a device token), answers 404 `Device not found`
 * — never 403 with a name, never B's data — and B's device is untouched. Then A's own routes with
 * B's ids (device, token) answer 404 too.
 */
describe('API: workspace isolation over every route of the table', () => {
  let t: TestApi;
  const ws = () => `iso${randomBytes(4).toString('hex')}`;
  const [a, b] = [ws(), ws()];
  let tokenA: string;
  let deviceTokenA: string;
  let tokenB: string;
  let deviceB: string;
  let tokenIdB: string;

  const routes = FEATURES.flatMap((f) => f.routes).filter(
    (r): r is ApiRoute => r.surface !== 'admin' && !r.root && r.auth !== 'none',
  );
  /** A route's path with every parameter filled with an id of the right look. */
  const concrete = (path: string) =>
    path.replace(/:(\w+)/g, (_m, name: string) =>
      /number|phone/i.test(name)
        ? '15550009999'
        : /messageId|^id$/.test(name)
          ? '3EB0AAAAAAAAAAAAAAAAAAAA'
          : 'x1',
    );

  before(async () => {
    t = await startAdminApi();
    for (const id of [a, b]) {
      const made = await adminCall(t, '/workspaces', { method: 'POST', json: { id, name: id } });
      expect(made.status).to.equal(201);
    }
    const mint = async (id: string, json: Record<string, unknown> = { name: 'owner' }) =>
      (await adminCall(t, `/workspaces/${id}/tokens`, { method: 'POST', json })).body;
    tokenA = (await mint(a)).value as string;
    const minted = await mint(b);
    tokenB = minted.value as string;
    tokenIdB = (minted.token as { id: string }).id;
    const mine = await call(`${t.api}/devices`, { method: 'POST', token: tokenA });
    const deviceA = (mine.body.data as { deviceId: string }).deviceId;
    deviceTokenA = (await mint(a, { name: 'shop', deviceId: deviceA })).value as string;
    deviceB = (
      (await call(`${t.api}/devices`, { method: 'POST', token: tokenB })).body.data as { deviceId: string }
    ).deviceId;
    await markConnected(t.redis, deviceB);
  });
  after(async () => {
    await t.close();
  });

  it("When A's tokens call every device route for B's device, then each answers 404 Device not found and B's device is unchanged", async () => {
    const deviceRoutes = routes.filter(
      (r) =>
        !isWorkspaceRoute({ method: r.method.toUpperCase(), path: `/api/messenger/v1${r.path}` } as never),
    );
    expect(deviceRoutes.length, 'the table has its device routes').to.be.greaterThan(70);
    const before = await t.redis.hgetall(`mgw:{${deviceB}}:session`);
    const seen: string[] = [];
    for (const route of deviceRoutes) {
      for (const [who, token] of [
        ['workspace token', tokenA],
        ['device token', deviceTokenA],
      ] as const) {
        const where = `${route.method.toUpperCase()} ${route.path} (${who})`;
        const r = await call(`${t.api}/devices/${deviceB}${concrete(route.path)}`, {
          method: route.method.toUpperCase(),
          token,
          ...(route.method === 'get' || route.body === 'none' ? {} : { json: {} }),
        });
        expect(r.status, where).to.equal(404);
        expect(r.body, where).to.deep.equal({ success: false, error: 'Device not found' });
        seen.push(where);
      }
    }
    expect(seen).to.have.length(deviceRoutes.length * 2);
    expect(await t.redis.hgetall(`mgw:{${deviceB}}:session`), "B's session").to.deep.equal(before);
  });

  it("When A's workspace token names B's ids on its own routes, then B's device and B's token are 404 and B's token still works", async () => {
    expect((await call(`${t.api}/devices/${deviceB}`, { token: tokenA })).status).to.equal(404);
    const list = (await call(`${t.api}/devices`, { token: tokenA })).body.data as { deviceId: string }[];
    expect(list.map((d) => d.deviceId)).to.not.include(deviceB);
    const revoke = await call(`${t.api}/tokens/${tokenIdB}`, { method: 'DELETE', token: tokenA });
    expect(revoke.status).to.equal(404);
    const tokens = (await call(`${t.api}/tokens`, { token: tokenA })).body.data as { id: string }[];
    expect(tokens.map((x) => x.id)).to.not.include(tokenIdB);
    const minted = await call(`${t.api}/tokens`, {
      method: 'POST',
      token: tokenA,
      json: { name: 'steal', deviceId: deviceB },
    });
    expect(minted.status).to.equal(404);
    expect((await call(`${t.api}/devices/${deviceB}/status`, { token: tokenB })).status).to.equal(200);
  });
});
