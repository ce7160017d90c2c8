import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { ERRORS, keys, type SendJobData } from '@mgw/contracts';
import { PoolStore, capWindow, clearRestriction, markLinked, markRestricted, markUnlinked } from '@mgw/store';
import { waitFor } from '@mgw/testing';
import { call, freshDeviceId, markConnected, startApi, type TestApi } from '../../../../test/helpers/api.js';
import { adminCall, signIn, startAdminApi } from '../../../../test/helpers/admin.js';
import { lastLine, tokenCli } from '../../../../test/helpers/cli.js';

/**
 * The pool capability's route tests, each against the real app and Redis:
 * - sends through a pool with the API alone (spread, refusals, list control, the mover);
 * - the admin API's pools of devices (made, read, changed and deleted; the token CLI's pool tokens).
 */

interface PoolBatch {
  batchId: string;
  total: number;
  state: string;
  counts: Record<string, number>;
  devices: { deviceId: string; total: number; counts: Record<string, number> }[];
  moved: number;
}

describe('Pools through the API alone (no sender takes the jobs): spread, refusals, list control, and the mover', () => {
  let t: TestApi;
  let devices: string[];
  let poolId: string;
  let token: string;
  before(async () => (t = await startApi({ pools: { moveIntervalMs: 100, minHealth: 50 } })));
  beforeEach(async () => {
    devices = [freshDeviceId(), freshDeviceId(), freshDeviceId()];
    for (const d of devices) {
      await markConnected(t.redis, d);
      await markLinked(t.redis, d);
    }
    poolId = `p${Math.random().toString(36).slice(2, 9)}`;
    const created = await new PoolStore(t.redis).create({ id: poolId, name: 'test pool', devices });
    expect(created).to.not.equal('exists');
    ({ value: token } = await t.services.tokens.create({ name: 'pool', poolId }));
  });
  afterEach(async () => {
    for (const d of devices) await t.services.acceptor.queue(d).obliterate({ force: true });
  });
  after(async () => t.close());

  /** What a logout leaves: not linked, and disconnected. */
  const logOut = async (deviceId: string) => {
    await markUnlinked(t.redis, deviceId);
    await t.services.sessions.markDisconnected(deviceId, 'logged_out');
  };
  const numbers = (n: number, from = 15553000000) => Array.from({ length: n }, (_, i) => String(from + i));
  const send = (json: unknown) => call(`${t.api}/send`, { token, json });
  const batch = async (batchId: string) =>
    (await call(`${t.api}/batches/${batchId}`, { token })).body.data as PoolBatch;
  const jobOf = async (deviceId: string, id: string) =>
    (await t.services.acceptor.queue(deviceId).getJob(id))?.data as SendJobData | undefined;

  it('When a list goes through a pool token, then every device holds a part under the one batch id, and each message is read where it is', async () => {
    const res = await send({ to: numbers(30), text: 'hello pool' });
    expect(res.status).to.equal(202);
    const batchId = String(res.body.messageId);
    const ids = res.body.messageIds as string[];
    const b = await batch(batchId);
    expect(b).to.include({ batchId, total: 30, state: 'active', moved: 0 });
    expect(b.devices.map((d) => d.deviceId).sort()).to.deep.equal([...devices].sort());
    for (const d of b.devices) expect(d.total).to.equal(10);
    const shown = await call(`${t.api}/messages/${ids[0]}`, { token });
    expect(shown.status).to.equal(200);
    expect((shown.body.data as { deviceId: string }).deviceId).to.be.oneOf(devices);
    const job = await jobOf((shown.body.data as { deviceId: string }).deviceId, ids[0]!);
    expect(job).to.include({ poolId, batchId, to: '15553000000' });
    // The pool's lists, newest first.
    const list = await call(`${t.api}/batches`, { token });
    expect((list.body.data as { batches: PoolBatch[] }).batches.map((x) => x.batchId)).to.include(batchId);
  });

  it('When a device is time-locked, below the health floor, at its daily cap or not linked, then a new list leaves it out; with none left the linked ones hold it, with none linked the answer is no device', async () => {
    await markRestricted(t.redis, devices[0]!, 'reachout_timelock', Date.now() + 60_000);
    await logOut(devices[1]!);
    const res = await send({ to: numbers(12, 15553100000), text: 'two left out' });
    expect(res.status).to.equal(202);
    const b = await batch(String(res.body.messageId));
    expect(b.devices.map((d) => [d.deviceId, d.total])).to.deep.equal([[devices[2], 12]]);
    // The lock over, two logouts today leave the first at 40 (below the floor, 50): still out.
    await clearRestriction(t.redis, devices[0]!);
    await t.redis.hincrby(keys.deviceHealth(devices[0]!, new Date().toISOString()), 'logouts', 2);
    const low = await send({ to: numbers(6, 15553150000), text: 'low health left out' });
    expect((await batch(String(low.body.messageId))).devices.map((d) => d.deviceId)).to.deep.equal([
      devices[2],
    ]);
    // At its daily cap (it sent what it may today) the last one drops out too: with none left in
    // the spread, the linked ones hold the list (each waits with its reason).
    const policy = t.services.config.sendPolicy;
    const day = capWindow(Date.now(), policy.windowMs, policy.defaults.timeZone);
    await t.redis.hset(keys.deviceSettings(devices[2]!), 'dailyCap', '3');
    await t.redis.hset(keys.deviceUsage(devices[2]!, day.start), 'sent', '3');
    const held = await send({ to: numbers(4, 15553160000), text: 'nobody in the spread' });
    expect(held.status).to.equal(202);
    const parts = (await batch(String(held.body.messageId))).devices.map((d) => d.deviceId).sort();
    expect(parts).to.deep.equal([devices[0], devices[2]].sort());
    // What a device merely holds does not drop it: below its cap it takes shares again.
    await t.redis.hset(keys.deviceUsage(devices[2]!, day.start), 'sent', '0');
    const room = await send({ to: numbers(3, 15553170000), text: 'room again' });
    expect((await batch(String(room.body.messageId))).devices.map((d) => d.deviceId)).to.deep.equal([
      devices[2],
    ]);
    for (const d of devices) await logOut(d);
    const none = await send({ to: numbers(2, 15553200000), text: 'nobody' });
    expect(none.status).to.equal(409);
    expect(none.body.error).to.equal(ERRORS.noDevice);
  });

  it('When a dropped device’s part lost its content (it waited past the retention), then it is not moved: it could be sent nowhere, and its device ends it', async () => {
    const res = await send({ to: numbers(9, 15553700000), text: 'content gone' });
    const batchId = String(res.body.messageId);
    const ids = res.body.messageIds as string[];
    const [gone] = devices;
    const own = [];
    for (const id of ids) if (await jobOf(gone!, id)) own.push((await jobOf(gone!, id))!);
    expect(own.length).to.be.greaterThan(0);
    await t.redis.del(keys.content(gone!, own[0]!.contentId));
    await logOut(gone!);
    // Ten rounds of the mover.
    await new Promise((r) => setTimeout(r, 1000));
    const after = await batch(batchId);
    expect(after.moved).to.equal(0);
    expect(after.devices.find((d) => d.deviceId === gone)!.total).to.equal(own.length);
    for (const j of own)
      expect(await t.redis.hexists(keys.message(gone!, j.messageId), 'movedTo')).to.equal(0);
  });

  it('When a personalised list is scheduled through a pool, then every part waits for its sendAt and each message keeps its own recipient’s variables', async () => {
    const phones = numbers(12, 15553600000);
    const sendAt = new Date(Date.now() + 3_600_000).toISOString();
    const res = await send({
      to: phones.map((phone, i) => ({ phone, vars: { name: `Ana ${i}` } })),
      text: 'Hi {{name}}',
      sendAt,
    });
    expect(res.status).to.equal(202);
    const b = await batch(String(res.body.messageId));
    expect(b.counts.scheduled).to.equal(12);
    expect(b.devices.length).to.equal(3);
    const ids = res.body.messageIds as string[];
    for (const [i, id] of ids.entries()) {
      const shown = (await call(`${t.api}/messages/${id}`, { token })).body.data as { deviceId: string };
      const job = (await jobOf(shown.deviceId, id))!;
      expect(job.to).to.equal(phones[i]);
      expect(job.sendAt).to.equal(Date.parse(sendAt));
      expect(await t.services.contents.vars(shown.deviceId, job.contentId, id)).to.deep.equal({
        name: `Ana ${i}`,
      });
    }
  });

  it('When a pooled list names a group or reacts, then it is refused 400 naming the field; a pool token on a device route is 403', async () => {
    const group = await send({ to: ['15553300000', '120363025246125888@g.us'], text: 'x' });
    expect(group.status).to.equal(400);
    expect(JSON.stringify(group.body.details)).to.include('"to",1');
    const reaction = await send({ to: '15553300000', reaction: { messageId: 'abc', emoji: '👍' } });
    expect(reaction.status).to.equal(400);
    for (const [method, path] of [
      ['GET', '/status'],
      ['POST', '/otp'],
      ['GET', '/messages'],
      ['POST', '/contacts/check'],
    ] as const) {
      const res = await call(`${t.api}${path}`, {
        method,
        token,
        ...(method === 'POST' ? { json: {} } : {}),
      });
      expect(res.status, path).to.equal(403);
      expect(res.body).to.deep.equal({ success: false, error: ERRORS.poolTokenNotAllowed });
    }
  });

  it('When a pooled list is paused, resumed and cancelled, then every part follows and the answer is the whole list', async () => {
    const res = await send({ to: numbers(9, 15553400000), text: 'controlled' });
    const batchId = String(res.body.messageId);
    const paused = await call(`${t.api}/batches/${batchId}/pause`, { method: 'POST', token });
    expect(paused.status).to.equal(200);
    expect((paused.body.data as PoolBatch).state).to.equal('paused');
    for (const d of devices) expect(await t.redis.hexists(keys.batch(d, batchId), 'pausedAt')).to.equal(1);
    const resumed = await call(`${t.api}/batches/${batchId}/resume`, { method: 'POST', token });
    expect((resumed.body.data as PoolBatch).state).to.equal('active');
    const cancelled = await call(`${t.api}/batches/${batchId}/cancel`, { method: 'POST', token });
    expect(cancelled.status).to.equal(200);
    const whole = cancelled.body.data as PoolBatch;
    expect(whole.state).to.equal('cancelled');
    expect(whole.counts.failed).to.equal(9);
    const again = await call(`${t.api}/batches/${batchId}/pause`, { method: 'POST', token });
    expect(again.status).to.equal(409);
    expect((await call(`${t.api}/batches/unknown-list/cancel`, { method: 'POST', token })).status).to.equal(
      404,
    );
  });

  it('When a device drops out (logged out) while it holds part of a list, then the mover gives its waiting messages to the others with the same ids, once, and the list still counts every message', async () => {
    const res = await send({ to: numbers(30, 15553500000), text: 'to be moved' });
    const batchId = String(res.body.messageId);
    const ids = res.body.messageIds as string[];
    const [gone] = devices;
    const before = await batch(batchId);
    const share = before.devices.find((d) => d.deviceId === gone)!.total;
    await logOut(gone!);
    await waitFor(async () => (await batch(batchId)).moved === share, {
      what: 'the moves',
      timeoutMs: 15_000,
    });
    const after = await batch(batchId);
    expect(after.total).to.equal(30);
    expect(after.counts.queued).to.equal(30);
    expect(after.devices.find((d) => d.deviceId === gone)!.total).to.equal(0);
    expect(await t.redis.hlen(keys.poolMoves(poolId))).to.equal(0);
    // Each message is on exactly one device's queue as a job that may run; the one it left says moved.
    for (const id of ids) {
      const holders = [];
      for (const d of devices) {
        const job = await jobOf(d, id);
        if (job && !(await t.redis.hexists(keys.message(d, id), 'movedTo'))) holders.push(d);
      }
      expect(holders, id).to.have.length(1);
      expect(holders[0]).to.not.equal(gone);
      const shown = await call(`${t.api}/messages/${id}`, { token });
      expect((shown.body.data as { deviceId: string }).deviceId).to.equal(holders[0]);
    }
    // The recipients moved stick to their new device: the next list goes there.
    const next = await send({ to: numbers(30, 15553500000), text: 'again' });
    const b2 = await batch(String(next.body.messageId));
    expect(b2.devices.map((d) => d.deviceId)).to.not.include(gone);
  });
});

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
    // Four CLI processes, one after another (5 s each here when quiet; CI's load doubled that).
    this.timeout(90_000);
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
