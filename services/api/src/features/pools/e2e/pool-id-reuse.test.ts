import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { ERRORS, keys } from '@mgw/contracts';
import { PoolStore, markLinked } from '@mgw/store';
import { call, markConnected, type TestApi } from '../../../../test/helpers/api.js';
import { adminCall, startAdminApi } from '../../../../test/helpers/admin.js';

/**
 * A pool token outlives its pool only by accident (deleting a pool is refused while tokens send
 * through it; the check and the delete are two steps, so a token linked in between is left on a
 * deleted pool). Pool ids are the install's: another workspace may then create a pool under the
 * same id (docs/security.md "Tenants: the ways a workspace's data could leave").
 */
describe('Pools: a token left on a deleted pool never reaches the pool another workspace makes under its id', () => {
  let t: TestApi;
  const tag = randomBytes(3).toString('hex');
  const [a, b] = [`pra${tag}`, `prb${tag}`];
  const poolId = `pr${tag}`;
  const devices: Record<string, string> = {};

  const device = async (workspace: string) => {
    const made = await adminCall(t, `/workspaces/${workspace}/devices`, { method: 'POST' });
    const id = (made.body.device as { deviceId: string }).deviceId;
    await markConnected(t.redis, id);
    await markLinked(t.redis, id);
    return id;
  };
  const createPool = async (workspace: string) => {
    const made = await adminCall(t, '/pools', {
      json: { id: poolId, name: workspace, devices: [devices[workspace]], workspace },
    });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
  };
  const poolToken = async (workspace: string) => {
    const made = await adminCall(t, `/workspaces/${workspace}/tokens`, { json: { name: 'pool', poolId } });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    return { value: made.body.value as string, id: (made.body.token as { id: string }).id };
  };
  const send = (token: string, to: string | string[] = ['15552710001', '15552710002']) =>
    call(`${t.api}/send`, { token, json: { to, text: 'through the pool' } });
  /** Deletes the pool as the route does once its check passed: the store's step alone. */
  const deleteUnderToken = async () => expect(await new PoolStore(t.redis).delete(poolId)).to.equal(true);

  before(async () => {
    t = await startAdminApi();
    for (const id of [a, b]) {
      expect((await adminCall(t, '/workspaces', { json: { id, name: id } })).status).to.equal(201);
      devices[id] = await device(id);
    }
  });
  afterEach(async () => {
    await new PoolStore(t.redis).delete(poolId);
  });
  after(async () => {
    for (const d of Object.values(devices)) await t.services.acceptor.queue(d).obliterate({ force: true });
    await t.close();
  });

  it("When A's pool is deleted under A's token and B makes a pool of the same id, then A's token neither sends through it nor reads its messages and batches (401); B's token does", async () => {
    await createPool(a);
    const stale = await poolToken(a);
    expect((await send(stale.value)).status).to.equal(202);
    const inUse = await adminCall(t, `/pools/${poolId}`, { method: 'DELETE' });
    expect(inUse.status, 'the route refuses while a token sends through it').to.equal(409);
    await deleteUnderToken();
    const gone = await send(stale.value);
    expect(gone.status, JSON.stringify(gone.body)).to.not.equal(202);

    await createPool(b);
    const own = await poolToken(b);
    const sent = await send(own.value);
    expect(sent.status).to.equal(202);
    const batchId = sent.body.messageId as string;
    const messageId = (sent.body.messageIds as string[])[0]!;
    const refused = { status: 401, body: { success: false, error: ERRORS.invalidToken } };
    for (const [method, path, json] of [
      ['POST', '/send', { to: '15552710003', text: 'into B' }],
      ['POST', '/send', { to: ['15552710003', '15552710004'], text: 'into B' }],
      ['GET', `/messages/${messageId}`],
      ['GET', `/batches/${batchId}`],
      ['POST', `/batches/${batchId}/cancel`],
      ['GET', '/messages'],
    ] as const) {
      const r = await call(`${t.api}${path}`, { method, token: stale.value, ...(json ? { json } : {}) });
      expect({ status: r.status, body: r.body }, `${method} ${path}`).to.deep.equal(refused);
    }
    const batch = await call(`${t.api}/batches/${batchId}`, { token: own.value });
    expect(batch.status).to.equal(200);
    expect(batch.body.data).to.deep.include({ total: 2 });
    const queued = await t.services.acceptor.queue(devices[b]!).getJobCounts();
    expect(
      Object.values(queued).reduce((n, c) => n + c, 0),
      "B's device holds B's list only",
    ).to.equal(2);
  });

  it("When this API has not yet heard that B made the pool (another replica did, its message on the way), then A's token is still refused: a pool that is not its workspace's, or none, is no pool of its", async () => {
    await createPool(a);
    const left = await poolToken(a);
    await deleteUnderToken();
    // A's token asks after the delete: this process now knows the pool as gone.
    expect((await send(left.value)).status).to.not.equal(202);
    // B's pool written as another replica writes it, its published change not heard here yet.
    await t.redis.hset(keys.pool(poolId), {
      id: poolId,
      name: b,
      devices: JSON.stringify([devices[b]]),
      workspace: b,
      createdAt: new Date().toISOString(),
      updatedAt: new Date().toISOString(),
    });
    await t.redis.sadd(keys.poolIndex(), poolId);
    const before = await t.services.acceptor.queue(devices[b]!).getJobCounts();
    const r = await send(left.value);
    expect({ status: r.status, body: r.body }).to.deep.equal({
      status: 401,
      body: { success: false, error: ERRORS.invalidToken },
    });
    expect(await t.services.acceptor.queue(devices[b]!).getJobCounts()).to.deep.equal(before);
  });

  it("When A's pool is deleted under A's token and A makes a pool of the same id again, then the token sends through it: the same workspace's pool by the name the token holds", async () => {
    await createPool(a);
    const left = await poolToken(a);
    await deleteUnderToken();
    await createPool(a);
    const r = await send(left.value);
    expect(r.status, JSON.stringify(r.body)).to.equal(202);
    const batch = await call(`${t.api}/batches/${String(r.body.messageId)}`, { token: left.value });
    expect(batch.status).to.equal(200);
  });
});
