import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { freshDeviceId, markConnected, type TestApi } from '../../../../test/helpers/api.js';
import { adminCall, signIn, startAdminApi } from '../../../../test/helpers/admin.js';
import { lastLine, tokenCli } from '../../../../test/helpers/cli.js';

/** A pool id of this run only (the suite's Redis is shared). */
const freshPoolId = () => `p-${randomBytes(5).toString('hex')}`;

const paths = (body: Record<string, unknown>) =>
  ((body.details ?? []) as { path: (string | number)[] }[]).map((d) => d.path.join('.'));

describe('Admin API: pools of devices', () => {
  let t: TestApi;
  const connected = freshDeviceId();
  const unknown = freshDeviceId();

  before(async () => {
    t = await startAdminApi();
    await markConnected(t.redis, connected);
    await t.redis.sadd(keys.linkedDevices(), connected);
  });
  after(async () => {
    await t.redis.srem(keys.linkedDevices(), connected);
    await t.close();
  });

  it('When a pool is created, read, listed, changed and deleted, then each answer has the pool with its devices’ states', async () => {
    const admin = await signIn(t);
    const id = freshPoolId();
    const created = await admin.call('/pools', {
      json: { id, name: ' Shop senders ', devices: [connected, unknown] },
    });
    expect(created.status).to.equal(201);
    const pool = created.body.pool as Record<string, unknown>;
    expect(pool).to.include({ id, name: 'Shop senders' });
    expect(pool.devices).to.deep.equal([connected, unknown]);
    expect(pool.createdAt).to.equal(pool.updatedAt);
    const states = pool.deviceStates as Record<string, unknown>[];
    expect(states[0]).to.include({
      deviceId: connected,
      status: 'connected',
      linked: true,
      spread: 'taking',
    });
    expect(states[0]!.healthScore).to.be.a('number').within(0, 100);
    // A device named before it is linked: allowed, shown as it is.
    // It takes no share of the pool's lists (`spread` says why).
    expect(states[1]).to.deep.equal({
      deviceId: unknown,
      status: 'disconnected',
      linked: false,
      spread: 'not_linked',
    });

    const got = await adminCall(t, `/pools/${id}`);
    expect(got.status).to.equal(200);
    expect(got.body.pool).to.deep.equal(pool);
    const listed = await adminCall(t, '/pools');
    expect(listed.status).to.equal(200);
    expect(listed.body.pools).to.deep.include(pool);

    const renamed = await admin.call(`/pools/${id}`, { method: 'PATCH', json: { name: 'Renamed' } });
    expect(renamed.status).to.equal(200);
    expect(renamed.body.pool).to.include({ name: 'Renamed', createdAt: pool.createdAt });
    expect((renamed.body.pool as { devices: string[] }).devices).to.deep.equal([connected, unknown]);
    const moved = await admin.call(`/pools/${id}`, { method: 'PATCH', json: { devices: [unknown] } });
    expect(moved.status).to.equal(200);
    expect(moved.body.pool).to.include({ name: 'Renamed' });
    expect((moved.body.pool as { devices: string[] }).devices).to.deep.equal([unknown]);

    const deleted = await admin.call(`/pools/${id}`, { method: 'DELETE' });
    expect(deleted.status).to.equal(200);
    expect(deleted.body).to.deep.equal({ success: true, message: 'Pool deleted' });
    expect(await t.redis.exists(keys.pool(id))).to.equal(0);
    expect(await t.redis.sismember(keys.poolIndex(), id)).to.equal(0);
  });

  it('When a pool is missing, then GET, PATCH and DELETE answer 404 Pool not found', async () => {
    const id = freshPoolId();
    for (const [method, json] of [
      ['GET', undefined],
      ['PATCH', { name: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await adminCall(t, `/pools/${id}`, { method, json });
      expect(res.status, method).to.equal(404);
      expect(res.body, method).to.deep.equal({ success: false, error: 'Pool not found' });
    }
    expect(await t.redis.exists(keys.pool(id)), 'PATCH created nothing').to.equal(0);
  });

  it('When the id is taken, then POST answers 409 and the pool stays as it was', async () => {
    const id = freshPoolId();
    expect((await adminCall(t, '/pools', { json: { id, name: 'First', devices: ['a'] } })).status).to.equal(
      201,
    );
    const again = await adminCall(t, '/pools', { json: { id, name: 'Second', devices: ['b'] } });
    expect(again.status).to.equal(409);
    expect(again.body).to.deep.equal({ success: false, error: 'A pool with this id already exists' });
    expect((await adminCall(t, `/pools/${id}`)).body.pool).to.include({ name: 'First' });
  });

  it('When a body breaks the rules, then 400 names each field and nothing is written', async () => {
    const cases: [unknown, string[]][] = [
      [{ id: 'Not A Slug', name: '', devices: [] }, ['id', 'name', 'devices']],
      [{ name: 'n', devices: ['a'] }, ['id']],
      [{ id: freshPoolId(), name: 'x'.repeat(65), devices: ['a'] }, ['name']],
      [{ id: freshPoolId(), name: 'n', devices: ['a', 'a'] }, ['devices.1']],
      [{ id: freshPoolId(), name: 'n', devices: ['ok', 'Bad Device'] }, ['devices.1']],
      [{ id: freshPoolId(), name: 'n', devices: 'a' }, ['devices']],
      [
        { id: freshPoolId(), name: 'n', devices: Array.from({ length: 101 }, (_, i) => `d-${i}`) },
        ['devices'],
      ],
      [{ id: freshPoolId(), name: 'n', devices: ['a'], extra: 1 }, ['extra']],
    ];
    for (const [body, fields] of cases) {
      const res = await adminCall(t, '/pools', { json: body });
      expect(res.status, JSON.stringify(body).slice(0, 60)).to.equal(400);
      expect(paths(res.body), JSON.stringify(body).slice(0, 60)).to.have.members(fields);
      const id = (body as { id?: string }).id;
      if (id) expect(await t.redis.exists(keys.pool(id))).to.equal(0);
    }
    const duplicate = await adminCall(t, '/pools', {
      json: { id: freshPoolId(), name: 'n', devices: ['a', 'a'] },
    });
    expect((duplicate.body.details as { message: string }[])[0]!.message).to.match(/names a device twice/);

    // Exactly 100 devices is a pool.
    const full = await adminCall(t, '/pools', {
      json: { id: freshPoolId(), name: 'Full', devices: Array.from({ length: 100 }, (_, i) => `dev-${i}`) },
    });
    expect(full.status).to.equal(201);
    expect((full.body.pool as { devices: string[] }).devices).to.have.length(100);

    const id = freshPoolId();
    await adminCall(t, '/pools', { json: { id, name: 'n', devices: ['a'] } });
    const empty = await adminCall(t, `/pools/${id}`, { method: 'PATCH', json: {} });
    expect(empty.status).to.equal(400);
    expect(empty.body.error).to.equal('Invalid request data');
    const badPatch = await adminCall(t, `/pools/${id}`, {
      method: 'PATCH',
      json: { devices: [], name: ' ' },
    });
    expect(paths(badPatch.body)).to.have.members(['devices', 'name']);
    const badId = await adminCall(t, '/pools/Not%20A%20Slug');
    expect(badId.status).to.equal(400);
    expect(paths(badId.body)).to.deep.equal(['poolId']);
  });

  it('When an API token is linked to a pool, then the pool cannot be deleted until it is revoked', async () => {
    const id = freshPoolId();
    await adminCall(t, '/pools', { json: { id, name: 'Linked', devices: [connected] } });
    const created = await adminCall(t, '/tokens', { json: { name: 'pool sender', poolId: id } });
    expect(created.status).to.equal(201);
    const token = created.body.token as { id: string };
    expect(created.body.token)
      .to.include({ name: 'pool sender', poolId: id })
      .and.not.to.have.property('deviceId');
    const listed = (await adminCall(t, '/tokens')).body.tokens as { id: string; poolId?: string }[];
    expect(listed.find((x) => x.id === token.id)).to.include({ poolId: id });

    const refused = await adminCall(t, `/pools/${id}`, { method: 'DELETE' });
    expect(refused.status).to.equal(409);
    expect(refused.body.error).to.equal('Pool has API tokens linked to it: revoke them first');
    expect(refused.body.details).to.deep.equal([
      { path: ['tokens', token.id], message: `API token ${token.id} (pool sender) sends through this pool` },
    ]);
    expect(await t.redis.exists(keys.pool(id))).to.equal(1);

    expect((await adminCall(t, `/tokens/${token.id}`, { method: 'DELETE' })).status).to.equal(200);
    expect((await adminCall(t, `/pools/${id}`, { method: 'DELETE' })).status).to.equal(200);
  });

  it('When a token names both a device and a pool, or a pool that does not exist, then 400 names poolId', async () => {
    const id = freshPoolId();
    await adminCall(t, '/pools', { json: { id, name: 'n', devices: ['a'] } });
    const both = await adminCall(t, '/tokens', { json: { name: 'both', deviceId: 'dev-1', poolId: id } });
    expect(both.status).to.equal(400);
    expect(paths(both.body)).to.deep.equal(['poolId']);
    expect((both.body.details as { message: string }[])[0]!.message).to.match(/one device or one pool/);

    const missing = await adminCall(t, '/tokens', { json: { name: 'none', poolId: freshPoolId() } });
    expect(missing.status).to.equal(400);
    expect(missing.body.error).to.equal('Pool not found');
    expect(paths(missing.body)).to.deep.equal(['poolId']);

    const badSlug = await adminCall(t, '/tokens', { json: { name: 'bad', poolId: 'Not A Slug' } });
    expect(paths(badSlug.body)).to.deep.equal(['poolId']);

    // The dashboard sends the field it did not use empty: that is none.
    const emptyDevice = await adminCall(t, '/tokens', { json: { name: 'ok', deviceId: '', poolId: id } });
    expect(emptyDevice.status).to.equal(201);
    expect(emptyDevice.body.token).to.include({ poolId: id });
    const emptyPool = await adminCall(t, '/tokens', { json: { name: 'ok2', deviceId: 'dev-1', poolId: '' } });
    expect(emptyPool.status).to.equal(201);
    expect(emptyPool.body.token).to.include({ deviceId: 'dev-1' }).and.not.to.have.property('poolId');
    for (const res of [emptyDevice, emptyPool])
      await adminCall(t, `/tokens/${(res.body.token as { id: string }).id}`, { method: 'DELETE' });
  });

  it('When the token CLI is given --pool, then it makes a pool token, refuses a missing pool and --device with --pool', async function () {
    this.timeout(30_000);
    const id = freshPoolId();
    await adminCall(t, '/pools', { json: { id, name: 'cli', devices: ['a'] } });
    const made = await tokenCli('create', '--name', 'cli pool', '--pool', id);
    expect(made.code, made.stderr).to.equal(0);
    expect(made.stdout).to.include(`pool: ${id}`);
    const verified = await t.services.tokens.verify(lastLine(made.stdout));
    expect(verified.ok && verified.token).to.include({ poolId: id });
    const listed = await tokenCli('list');
    expect(listed.stdout).to.include(`pool:${id}`);

    const missing = await tokenCli('create', '--name', 'x', '--pool', freshPoolId());
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.match(/no pool with id/);
    const both = await tokenCli('create', '--name', 'x', '--pool', id, '--device', 'dev-1');
    expect(both.code).not.to.equal(0);
    expect(both.stderr).to.match(/--device or --pool/);
    if (verified.ok) await t.services.tokens.revoke(verified.token.id);
  });

  it('When the dashboard changes a pool without its CSRF token, then 403', async () => {
    const admin = await signIn(t);
    const res = await admin.call('/pools', {
      json: { id: freshPoolId(), name: 'n', devices: ['a'] },
      csrf: false,
    });
    expect(res.status).to.equal(403);
    const put = await adminCall(t, '/pools', { method: 'PUT', json: {} });
    expect(put.status).to.equal(405);
  });
});
