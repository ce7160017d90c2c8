import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { keys } from '@mgw/contracts';
import { TOKEN_LIFETIME_MAX_DAYS, markLinked } from '@mgw/store';
import {
  call,
  freshDeviceId,
  markConnected,
  type JsonResponse,
  type TestApi,
} from '../../../../test/helpers/api.js';
import { adminCall, signIn, startAdminApi, type AdminSessionClient } from '../../../../test/helpers/admin.js';

/**
 * What a tenant can create and for how long, over a real API and Redis (docs/workspaces.md
 * "Quotas"): a token's lifetime has one maximum on every route that mints tokens.
 */
describe('API: bounds — a token lives at most ten years, on every route that mints one', () => {
  let t: TestApi;
  const id = `bd${randomBytes(4).toString('hex')}`;
  let owner = '';
  let console_: AdminSessionClient;

  before(async () => {
    // Many tokens are minted here: the connect limit is not what is tested.
    t = await startAdminApi({ rateLimits: { connect: 100_000 } });
    expect(
      (await adminCall(t, '/workspaces', { method: 'POST', json: { id, name: 'Bounds' } })).status,
    ).to.equal(201);
    const minted = await adminCall(t, `/workspaces/${id}/tokens`, {
      method: 'POST',
      json: { name: 'owner' },
    });
    owner = minted.body.value as string;
    const password = 'a console password of some length';
    const user = `admin-${id}@example.test`;
    const made = await adminCall(t, `/workspaces/${id}/users`, {
      method: 'POST',
      json: { user, password, role: 'admin' },
    });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    console_ = await signIn(t, password, user);
  });
  after(async () => t.close());

  /** Every route that mints a token, each given `expiresIn`. */
  const routes: [string, (expiresIn: string) => Promise<JsonResponse>][] = [
    [
      "the workspace's POST /tokens",
      (expiresIn) =>
        call(`${t.api}/tokens`, { method: 'POST', token: owner, json: { name: 'x', expiresIn } }),
    ],
    [
      "the operator's POST /workspaces/{id}/tokens",
      (expiresIn) =>
        adminCall(t, `/workspaces/${id}/tokens`, { method: 'POST', json: { name: 'x', expiresIn } }),
    ],
    [
      "the operator's POST /tokens",
      (expiresIn) => adminCall(t, '/tokens', { method: 'POST', json: { name: 'x', expiresIn } }),
    ],
    [
      "the console's POST /tokens",
      (expiresIn) => console_.call('/tokens', { method: 'POST', json: { name: 'x', expiresIn } }),
    ],
  ];

  const day = 86_400_000;
  const max = TOKEN_LIFETIME_MAX_DAYS;

  it('When expiresIn is the maximum in any unit, then the token is made and expires then', async () => {
    expect(max).to.equal(3650);
    for (const [route, mint] of routes) {
      for (const given of [`${max}d`, `${max * 24}h`, `${max * 1440}m`, `${max * 86_400}s`]) {
        const before = Date.now();
        const r = await mint(given);
        expect(r.status, `${route} ${given}: ${JSON.stringify(r.body)}`).to.equal(201);
        const token = ((r.body.data as Record<string, unknown> | undefined) ?? r.body).token as {
          expiresAt: string;
        };
        const at = Date.parse(token.expiresAt);
        expect(at, `${route} ${given}`).to.be.within(before + max * day - 1000, Date.now() + max * day);
      }
    }
  });

  it('When expiresIn is past the maximum or past any date, then 400 naming expiresIn, never a 5xx', async () => {
    const over = [
      `${max + 1}d`,
      `${max * 24 + 1}h`,
      `${max * 1440 + 1}m`,
      `${max * 86_400 + 1}s`,
      '9999999999d',
    ];
    const malformed = [
      '99999999999999999999d',
      '1e400d',
      '9007199254740993s',
      '0d',
      '-1d',
      '30x',
      '1.5d',
      ' 30d',
    ];
    for (const [route, mint] of routes) {
      for (const given of [...over, ...malformed]) {
        const r = await mint(given);
        expect(r.status, `${route} ${given}: ${JSON.stringify(r.body)}`).to.equal(400);
        expect(r.body.success).to.equal(false);
        expect(r.body.error).to.equal('Invalid request data');
        const [detail] = r.body.details as { path: string[]; message: string }[];
        expect(detail!.path, `${route} ${given}`).to.deep.equal(['expiresIn']);
        expect(detail!.message, `${route} ${given}`).to.match(
          over.includes(given) ? /must be at most 3650d \(10 years\)/ : /must be a positive number/,
        );
      }
    }
  });
});

describe("API: default lists every device it owns, linked before or after the API's start", () => {
  let t: TestApi;
  before(async () => (t = await startAdminApi()));
  after(async () => t.close());

  it('When a device is linked after the start, then default lists it, counts it and its workspace token reads it; given to a workspace, it leaves default', async () => {
    const device = freshDeviceId();
    // Linked as the connection service marks a link (no workspace names it: it is default's).
    await markConnected(t.redis, device);
    await markLinked(t.redis, device);
    const listed = await adminCall(t, '/workspaces/default/devices');
    expect(listed.status).to.equal(200);
    const ids = (listed.body.devices as { deviceId: string }[]).map((d) => d.deviceId);
    expect(ids).to.include(device);
    const shown = await adminCall(t, '/workspaces/default');
    expect((shown.body.workspace as { devices: number }).devices).to.equal(ids.length);
    const all = await adminCall(t, '/workspaces');
    const listedDefault = (all.body.workspaces as { id: string; devices: number }[]).find(
      (w) => w.id === 'default',
    );
    expect(listedDefault!.devices).to.equal(ids.length);
    const minted = await adminCall(t, '/workspaces/default/tokens', {
      method: 'POST',
      json: { name: 'default ws' },
    });
    const token = minted.body.value as string;
    const one = await call(`${t.api}/devices/${device}`, { token });
    expect(one.status, JSON.stringify(one.body)).to.equal(200);
    expect(one.body.data).to.deep.include({ deviceId: device, status: 'connected' });
    expect(
      ((await call(`${t.api}/devices`, { token })).body.data as { deviceId: string }[]).map(
        (d) => d.deviceId,
      ),
    ).to.include(device);

    // Another workspace's device, linked too, is never default's.
    const other = `dl${randomBytes(4).toString('hex')}`;
    await adminCall(t, '/workspaces', { method: 'POST', json: { id: other, name: 'Other' } });
    const theirs = (await adminCall(t, `/workspaces/${other}/devices`, { method: 'POST' })).body.device as {
      deviceId: string;
    };
    await markLinked(t.redis, theirs.deviceId);
    const after = (await adminCall(t, '/workspaces/default/devices')).body.devices as { deviceId: string }[];
    expect(after.map((d) => d.deviceId))
      .to.include(device)
      .and.not.include(theirs.deviceId);
    expect((await call(`${t.api}/devices/${theirs.deviceId}`, { token })).status).to.equal(404);
  });
});

describe('API: a daily quota counts every message of the day, whenever it was set', () => {
  let t: TestApi;
  before(async () => (t = await startAdminApi()));
  after(async () => t.close());

  it('When a workspace without a quota has sent, then a quota set below that refuses the next send; raised, removed and set again, it still counts the whole day', async () => {
    const id = `dq${randomBytes(4).toString('hex')}`;
    expect(
      (await adminCall(t, '/workspaces', { method: 'POST', json: { id, name: 'Day' } })).status,
    ).to.equal(201);
    const token = (await adminCall(t, `/workspaces/${id}/tokens`, { method: 'POST', json: { name: 'o' } }))
      .body.value as string;
    const device = (
      (await call(`${t.api}/devices`, { method: 'POST', token })).body.data as { deviceId: string }
    ).deviceId;
    await markConnected(t.redis, device);
    const send = (to: string | string[]) =>
      call(`${t.api}/devices/${device}/send`, { method: 'POST', token, json: { to, text: 'counted' } });
    const quota = async (messagesPerDay: number | null) =>
      expect(
        (await adminCall(t, `/workspaces/${id}`, { method: 'PATCH', json: { quotas: { messagesPerDay } } }))
          .status,
      ).to.equal(200);
    const refusedAt = (r: JsonResponse, limit: number) => {
      expect(r.status, JSON.stringify(r.body)).to.equal(429);
      expect((r.body.details as Record<string, unknown>[])[0]).to.include({ quota: 'messagesPerDay', limit });
    };

    expect((await send(['15550004001', '15550004002'])).status).to.equal(202);
    expect((await send('15550004003')).status).to.equal(202);
    await quota(2);
    refusedAt(await send('15550004004'), 2);
    await quota(4);
    expect((await send('15550004005')).status).to.equal(202);
    refusedAt(await send('15550004006'), 4);
    await quota(null);
    expect((await send(['15550004007', '15550004008'])).status).to.equal(202);
    await quota(6);
    refusedAt(await send('15550004009'), 6);
    await quota(8);
    expect((await send('15550004010')).status).to.equal(202);
    expect(await t.redis.zcard(keys.messageIndex(device))).to.equal(7);
  });
});

describe('API: default ceilings — devices without a quota, tokens and console users per workspace', () => {
  let t: TestApi;
  const ws = (p: string) => `${p}${randomBytes(4).toString('hex')}`;
  const PASSWORD = 'a console password of some length';
  /** A workspace with its owner's workspace token (its first token) and a console admin. */
  const workspace = async (id: string, quotas: Record<string, number> = {}) => {
    expect(
      (await adminCall(t, '/workspaces', { method: 'POST', json: { id, name: id, quotas } })).status,
    ).to.equal(201);
    const owner = (
      await adminCall(t, `/workspaces/${id}/tokens`, { method: 'POST', json: { name: 'owner' } })
    ).body.value as string;
    const user = `admin@${id}.test`;
    const made = await adminCall(t, `/workspaces/${id}/users`, {
      method: 'POST',
      json: { user, password: PASSWORD, role: 'admin' },
    });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    return { owner, console: await signIn(t, PASSWORD, user) };
  };
  const reached = (r: JsonResponse, quota: string, limit: number) => {
    expect(r.status, JSON.stringify(r.body)).to.equal(429);
    expect(r.body).to.deep.equal({
      success: false,
      error: 'Workspace quota reached',
      details: [
        {
          path: ['quotas', quota],
          message: `The workspace's ${quota} quota (${limit}) is reached`,
          quota,
          limit,
          resetsAt: null,
        },
      ],
    });
  };

  before(async () => {
    t = await startAdminApi({
      rateLimits: { connect: 100_000 },
      workspaceCeilings: { devices: 2, tokens: 3, users: 2 },
    });
  });
  after(async () => t.close());

  it('When a workspace without a device quota holds the ceiling, then every route that makes or gives it a device answers 429; a quota is the bound instead; default has none', async () => {
    const id = ws('cd');
    const { owner, console: admin } = await workspace(id);
    expect((await call(`${t.api}/devices`, { method: 'POST', token: owner })).status).to.equal(201);
    expect((await adminCall(t, `/workspaces/${id}/devices`, { method: 'POST' })).status).to.equal(201);
    reached(await call(`${t.api}/devices`, { method: 'POST', token: owner }), 'devices', 2);
    reached(await adminCall(t, `/workspaces/${id}/devices`, { method: 'POST' }), 'devices', 2);
    reached(await admin.call(`/workspaces/${id}/devices`, { method: 'POST' }), 'devices', 2);
    reached(
      await adminCall(t, `/workspaces/${id}/devices/${freshDeviceId()}`, { method: 'PUT' }),
      'devices',
      2,
    );
    expect(((await call(`${t.api}/devices`, { token: owner })).body.data as unknown[]).length).to.equal(2);

    // Its own quota, above the ceiling, is its bound.
    const roomy = ws('cq');
    const { owner: roomyOwner } = await workspace(roomy, { devices: 3 });
    for (let i = 0; i < 3; i++)
      expect((await call(`${t.api}/devices`, { method: 'POST', token: roomyOwner })).status).to.equal(201);
    reached(await call(`${t.api}/devices`, { method: 'POST', token: roomyOwner }), 'devices', 3);

    // default owns the install's devices from before workspaces: no ceiling.
    for (let i = 0; i < 3; i++)
      expect(
        (await adminCall(t, `/workspaces/default/devices/${freshDeviceId()}`, { method: 'PUT' })).status,
      ).to.equal(200);
  });

  it('When a workspace holds the token ceiling, then every route that mints it a token answers 429; default has none', async () => {
    const id = ws('ct');
    const { owner, console: admin } = await workspace(id);
    const device = (
      (await call(`${t.api}/devices`, { method: 'POST', token: owner })).body.data as { deviceId: string }
    ).deviceId;
    expect(
      (await call(`${t.api}/tokens`, { method: 'POST', token: owner, json: { name: 'two' } })).status,
    ).to.equal(201);
    expect((await admin.call('/tokens', { method: 'POST', json: { name: 'three' } })).status).to.equal(201);
    reached(
      await call(`${t.api}/tokens`, { method: 'POST', token: owner, json: { name: 'x' } }),
      'tokens',
      3,
    );
    reached(
      await adminCall(t, `/workspaces/${id}/tokens`, { method: 'POST', json: { name: 'x' } }),
      'tokens',
      3,
    );
    reached(await admin.call('/tokens', { method: 'POST', json: { name: 'x' } }), 'tokens', 3);
    reached(
      await adminCall(t, '/tokens', { method: 'POST', json: { name: 'x', deviceId: device } }),
      'tokens',
      3,
    );
    expect(((await call(`${t.api}/tokens`, { token: owner })).body.data as unknown[]).length).to.equal(3);
    // Revoked, one frees its place.
    const [oldest] = (
      (await call(`${t.api}/tokens`, { token: owner })).body.data as { id: string; name: string }[]
    ).filter((x) => x.name === 'two');
    expect((await call(`${t.api}/tokens/${oldest!.id}`, { method: 'DELETE', token: owner })).status).to.equal(
      200,
    );
    expect(
      (await adminCall(t, `/workspaces/${id}/tokens`, { method: 'POST', json: { name: 'again' } })).status,
    ).to.equal(201);
    for (let i = 0; i < 4; i++)
      expect(
        (await adminCall(t, '/workspaces/default/tokens', { method: 'POST', json: { name: `d${i}` } }))
          .status,
      ).to.equal(201);
  });

  it('When a workspace holds the console-user ceiling, then adding one more answers 429, by the operator or its admin; a removed user frees its place', async () => {
    const id = ws('cu');
    const { console: admin } = await workspace(id);
    const add = (user: string, by: 'operator' | 'admin' = 'operator') => {
      const json = { user: `${user}@${id}.test`, password: PASSWORD, role: 'agent' };
      return by === 'operator'
        ? adminCall(t, `/workspaces/${id}/users`, { method: 'POST', json })
        : admin.call(`/workspaces/${id}/users`, { method: 'POST', json });
    };
    expect((await add('second', 'admin')).status).to.equal(201);
    reached(await add('third'), 'users', 2);
    reached(await add('third', 'admin'), 'users', 2);
    expect((await adminCall(t, `/workspaces/${id}/users`)).body.users).to.have.length(2);
    expect(
      (await adminCall(t, `/workspaces/${id}/users/second@${id}.test`, { method: 'DELETE' })).status,
    ).to.equal(200);
    expect((await add('third')).status).to.equal(201);
    // Another workspace has its own room.
    expect((await workspace(ws('cv'))).owner).to.be.a('string');
  });
});
