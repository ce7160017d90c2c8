import { expect } from 'chai';
import type { Job } from 'bullmq';
import { ERRORS, FAILURE_REASONS, keys, type SendJobData } from '@mgw/contracts';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
} from '../../../../test/helpers/api.js';
import { adminCall, signIn, startAdminApi } from '../../../../test/helpers/admin.js';

/**
 * The list (batch) capability's route tests, each against the API alone (no sender takes the jobs):
 * - the public GET /batches, pause, resume and cancel;
 * - the admin API's lists of a device (the Campaigns page) and their pause, resume and cancel.
 */

interface Batch {
  batchId: string;
  total: number;
  state: string;
  counts: Record<string, number>;
  createdAt: string;
  pausedAt?: string;
  cancelledAt?: string;
}

describe('Lists: GET /batches, pause, resume and cancel (the API alone: no sender takes the jobs)', () => {
  let t: TestApi;
  let deviceId: string;
  let token: string;
  before(async () => (t = await startApi()));
  beforeEach(async () => {
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    await markConnected(t.redis, deviceId);
  });
  afterEach(async () => {
    await t.services.acceptor.queue(deviceId).obliterate({ force: true });
  });
  after(async () => t.close());

  async function sendList(n: number): Promise<{ batchId: string; ids: string[] }> {
    const to = Array.from({ length: n }, (_, i) => String(15552000000 + i));
    const res = await call(`${t.api}/send`, { token, json: { to, text: 'hello' } });
    expect(res.status).to.equal(202);
    return { batchId: String(res.body.messageId), ids: res.body.messageIds as string[] };
  }
  const control = (batchId: string, action: string, as = token) =>
    call(`${t.api}/batches/${batchId}/${action}`, { method: 'POST', token: as });
  const batch = async (batchId: string) =>
    (await call(`${t.api}/batches/${batchId}`, { token })).body.data as Batch;
  const job = async (id: string) =>
    (await t.services.acceptor.queue(deviceId).getJob(id)) as Job<SendJobData> | undefined;
  const sumOfStatuses = (c: Record<string, number>) =>
    c.queued! + c.sent! + c.delivered! + c.read! + c.failed!;

  it('When a list is accepted, then GET /batches/:batchId reads it active with counts by status and held 0', async () => {
    const { batchId } = await sendList(3);
    const b = await batch(batchId);
    expect(b).to.include({ batchId, total: 3, state: 'active' });
    expect(b.counts).to.deep.equal({
      scheduled: 0,
      queued: 3,
      sent: 0,
      delivered: 0,
      read: 0,
      failed: 0,
      deleted: 0,
      held: 0,
    });
  });

  it('When a list is paused and resumed, then each answers 200 with the list after the change, a repeat changes nothing, and both events are in the outbox', async () => {
    await t.redis.hset(keys.webhook(deviceId), { url: 'https://hooks.example.test/x', events: '*' });
    const { batchId } = await sendList(2);
    const paused = await control(batchId, 'pause');
    expect(paused.status).to.equal(200);
    expect(paused.body.data).to.include({ batchId, state: 'paused' });
    expect((paused.body.data as Batch).pausedAt).to.be.a('string');
    const again = await control(batchId, 'pause');
    expect(again.status).to.equal(200);
    expect(again.body.data).to.deep.equal(paused.body.data);
    expect((await batch(batchId)).state).to.equal('paused');

    const resumed = await control(batchId, 'resume');
    expect(resumed.status).to.equal(200);
    expect(resumed.body.data).to.include({ state: 'active' });
    expect(resumed.body.data).to.not.have.property('pausedAt');
    expect((await control(batchId, 'resume')).status).to.equal(200);

    const outbox = (await t.redis.xrange(keys.eventOutbox(deviceId), '-', '+')) as [string, string[]][];
    const events = outbox.map(([, f]) => ({
      type: f[f.indexOf('type') + 1],
      data: JSON.parse(f[f.indexOf('data') + 1]!) as Record<string, string>,
    }));
    expect(events.map((e) => e.type)).to.deep.equal(['batch.paused', 'batch.resumed']);
    expect(events[0]!.data).to.include({ deviceId, batchId, state: 'paused' });
    expect(events[0]!.data.pausedAt).to.equal((paused.body.data as Batch).pausedAt);
    expect(events[1]!.data).to.include({ deviceId, batchId, state: 'active' });
    expect(events[1]!.data.resumedAt).to.be.a('string');
  });

  it('When a list is cancelled, then every queued message is failed / cancelled and its job gone before the answer, counts sum to total, and a repeat is 200', async () => {
    const { batchId, ids } = await sendList(5);
    const res = await control(batchId, 'cancel');
    expect(res.status).to.equal(200);
    const b = res.body.data as Batch;
    expect(b).to.include({ state: 'cancelled', total: 5 });
    expect(b.cancelledAt).to.be.a('string');
    expect(b.counts).to.include({ queued: 0, failed: 5, held: 0 });
    expect(sumOfStatuses(b.counts)).to.equal(5);
    for (const id of ids) {
      const record = await call(`${t.api}/messages/${id}`, { token });
      expect(record.body.data).to.include({ status: 'failed', error: FAILURE_REASONS.cancelled });
      expect(await job(id)).to.equal(undefined);
    }
    const again = await control(batchId, 'cancel');
    expect(again.status).to.equal(200);
    expect(again.body.data).to.include({ state: 'cancelled' });
    for (const action of ['pause', 'resume']) {
      const refused = await control(batchId, action);
      expect(refused.status, action).to.equal(409);
      expect(refused.body).to.deep.equal({ success: false, error: ERRORS.batchCancelled });
    }
    // The queue quota was given back with the messages.
    expect(Number(await t.redis.hget(keys.deviceQueue(deviceId), 'messages'))).to.equal(0);
  });

  it('When every message of a list already left the queue, then pause, resume and cancel answer 409', async () => {
    const { batchId, ids } = await sendList(2);
    for (const id of ids)
      await t.services.messages.markFailed((await job(id))!.data, FAILURE_REASONS.invalidNumber);
    expect((await batch(batchId)).state).to.equal('completed');
    for (const action of ['pause', 'resume', 'cancel']) {
      const refused = await control(batchId, action);
      expect(refused.status, action).to.equal(409);
      expect(refused.body).to.deep.equal({ success: false, error: ERRORS.batchCompleted });
    }
  });

  it("When another device's list (or no list) is controlled or read, then 404 Batch not found", async () => {
    const { batchId } = await sendList(2);
    const otherToken = await createToken(t, { deviceId: freshDeviceId() });
    for (const action of ['pause', 'resume', 'cancel']) {
      const res = await control(batchId, action, otherToken);
      expect(res.status, action).to.equal(404);
      expect(res.body).to.deep.equal({ success: false, error: ERRORS.batchNotFound });
      expect((await control('no-such-list', action)).status).to.equal(404);
    }
    expect((await call(`${t.api}/batches/${batchId}`, { token: otherToken })).status).to.equal(404);
    expect((await batch(batchId)).state).to.equal('active');
    const listed = await call(`${t.api}/batches`, { token: otherToken });
    expect(listed.body.data).to.deep.equal({ batches: [] });
    const withBody = await call(`${t.api}/batches/${batchId}/pause`, { token, json: { x: 1 } });
    expect(withBody.status).to.equal(400);
    const wrongMethod = await call(`${t.api}/batches/${batchId}/pause`, { token });
    expect(wrongMethod.status).to.equal(405);
  });

  it('When a device sent lists, then GET /batches pages them newest first with a cursor (limit 1 to 100)', async () => {
    const sent: string[] = [];
    for (let i = 0; i < 5; i++) sent.push((await sendList(1)).batchId);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const res = await call(`${t.api}/batches?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token });
      expect(res.status).to.equal(200);
      const data = res.body.data as { batches: Batch[]; nextCursor?: string };
      expect(data.batches.length).to.be.at.most(2);
      seen.push(...data.batches.map((b) => b.batchId));
      if (!data.nextCursor) break;
      cursor = data.nextCursor;
    }
    expect(seen).to.deep.equal([...sent].reverse());
    const all = await call(`${t.api}/batches`, { token });
    expect((all.body.data as { batches: Batch[] }).batches.map((b) => b.batchId)).to.deep.equal(seen);
    for (const bad of ['limit=0', 'limit=101', 'cursor=nope']) {
      const res = await call(`${t.api}/batches?${bad}`, { token });
      expect(res.status, bad).to.equal(400);
    }
  });

  it('When the sender holds messages of a list, then their records show held (also in GET /messages) and the list counts them', async () => {
    const { batchId, ids } = await sendList(3);
    const until = Date.now() + 60_000;
    for (const id of ids.slice(0, 2))
      await t.services.messages.hold((await job(id))!.data, 'first_contact_cap', until);
    const record = await call(`${t.api}/messages/${ids[0]}`, { token });
    expect(record.body.data).to.deep.include({
      status: 'queued',
      held: { reason: 'first_contact_cap', until: new Date(until).toISOString() },
    });
    expect((await call(`${t.api}/messages/${ids[2]}`, { token })).body.data).to.not.have.property('held');
    const page = await call(`${t.api}/messages?batchId=${batchId}`, { token });
    const listed = (page.body.data as { messages: { messageId: string; held?: unknown }[] }).messages;
    expect(listed.filter((m) => m.held).map((m) => m.messageId)).to.have.members(ids.slice(0, 2));
    const b = await batch(batchId);
    expect(b.counts).to.include({ queued: 3, held: 2 });
    expect(sumOfStatuses(b.counts)).to.equal(3);
  });
});

interface List {
  batchId: string;
  total: number;
  state: string;
  counts: Record<string, number>;
  heldReasons?: { reason: string; until: string }[];
}

describe("Admin API: a device's lists (the Campaigns page) and their pause, resume and cancel", () => {
  let t: TestApi;
  before(async () => {
    t = await startAdminApi();
  });
  after(async () => {
    await t.close();
  });

  async function deviceWithToken(): Promise<{ deviceId: string; token: string }> {
    const deviceId = freshDeviceId();
    await markConnected(t.redis, deviceId);
    return { deviceId, token: await createToken(t, { deviceId }) };
  }
  async function sendList(token: string, to: string[]): Promise<{ batchId: string; ids: string[] }> {
    const res = await call(`${t.api}/send`, { token, json: { to, text: 'campaign' } });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    return { batchId: res.body.messageId as string, ids: res.body.messageIds as string[] };
  }
  const jobOf = async (deviceId: string, id: string) =>
    (await t.services.acceptor.queue(deviceId).getJob(id))!.data as SendJobData;

  it('When a device has lists, then they come newest first a page at a time, as the public GET /batches reads them', async () => {
    const { deviceId, token } = await deviceWithToken();
    const sent: string[] = [];
    for (let i = 0; i < 5; i++) sent.push((await sendList(token, ['15550003001', '15550003002'])).batchId);
    const newestFirst = [...sent].reverse();

    const seen: List[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await adminCall(
        t,
        `/devices/${deviceId}/batches?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const data = res.body.data as { batches: List[]; nextCursor?: string };
      seen.push(...data.batches);
      cursor = data.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).to.equal(3);
    expect(seen.map((b) => b.batchId)).to.deep.equal(newestFirst);
    const pub = await call(`${t.api}/batches?limit=100`, { token });
    expect(seen).to.deep.equal((pub.body.data as { batches: List[] }).batches);
    expect(seen[0]).to.deep.include({ total: 2, state: 'active' });

    // Another device's lists are not this one's.
    const other = await adminCall(t, `/devices/${freshDeviceId()}/batches`);
    expect(other.body.data).to.deep.equal({ batches: [] });
    for (const q of ['limit=0', 'limit=101', 'cursor=nope', 'other=1']) {
      const bad = await adminCall(t, `/devices/${deviceId}/batches?${q}`);
      expect(bad.status, q).to.equal(400);
      expect(bad.body).to.include({ success: false, error: 'Invalid request data' });
    }
    expect((await call(`${t.url}/api/admin/v1/devices/${deviceId}/batches`)).status).to.equal(401);
  });

  it('When some messages of a list are held, then the list says why, with the earliest until of each reason', async () => {
    const { deviceId, token } = await deviceWithToken();
    const { batchId, ids } = await sendList(token, ['15550003101', '15550003102', '15550003103']);
    const soon = Date.now() + 60_000;
    expect(await t.services.messages.hold(await jobOf(deviceId, ids[0]!), 'first_contact_cap', soon + 5000))
      .to.be.true;
    expect(await t.services.messages.hold(await jobOf(deviceId, ids[1]!), 'first_contact_cap', soon)).to.be
      .true;
    const res = await adminCall(t, `/devices/${deviceId}/batches`);
    const [list] = (res.body.data as { batches: List[] }).batches;
    expect(list).to.deep.include({ batchId, state: 'active' });
    expect(list!.counts).to.include({ queued: 3, held: 2 });
    expect(list!.heldReasons).to.deep.equal([
      { reason: 'first_contact_cap', until: new Date(soon).toISOString() },
    ]);
    // A list with nothing held has no reasons.
    const plain = await sendList(token, ['15550003104', '15550003105']);
    const again = await adminCall(t, `/devices/${deviceId}/batches`);
    const newest = (again.body.data as { batches: List[] }).batches[0]!;
    expect(newest.batchId).to.equal(plain.batchId);
    expect(newest).to.not.have.property('heldReasons');
  });

  it('When the dashboard pauses, resumes and cancels a list, then the public API reads each state and the errors are the public ones', async () => {
    const { deviceId, token } = await deviceWithToken();
    const { batchId } = await sendList(token, ['15550003201', '15550003202', '15550003203']);
    const session = await signIn(t);
    const control = (action: string, id = batchId, dev = deviceId) =>
      session.call(`/devices/${dev}/batches/${id}/${action}`, { method: 'POST' });
    const publicState = async () =>
      ((await call(`${t.api}/batches/${batchId}`, { token })).body.data as List).state;

    const paused = await control('pause');
    expect(paused.status, JSON.stringify(paused.body)).to.equal(200);
    expect(paused.body.data).to.deep.include({ batchId, state: 'paused' });
    expect(await publicState()).to.equal('paused');
    expect((await control('pause')).status, 'a repeat').to.equal(200);

    const resumed = await control('resume');
    expect(resumed.body.data).to.deep.include({ batchId, state: 'active' });
    expect(await publicState()).to.equal('active');

    const cancelled = await control('cancel');
    expect(cancelled.status).to.equal(200);
    const list = cancelled.body.data as List;
    expect(list.state).to.equal('cancelled');
    expect(list.counts).to.include({ queued: 0, failed: 3 });
    expect(await publicState()).to.equal('cancelled');

    const refused = await control('resume');
    expect(refused.status).to.equal(409);
    expect(refused.body).to.deep.equal({
      success: false,
      error: (await call(`${t.api}/batches/${batchId}/resume`, { token, method: 'POST' })).body.error,
    });
    expect((await control('pause', 'no-such-list')).body).to.deep.equal({
      success: false,
      error: 'Batch not found',
    });
    expect((await control('cancel', batchId, freshDeviceId())).status, "another device's").to.equal(404);
    // A change made with a session needs its CSRF token; the admin token needs none.
    const noCsrf = await session.call(`/devices/${deviceId}/batches/${batchId}/pause`, {
      method: 'POST',
      csrf: false,
    });
    expect(noCsrf.status).to.equal(403);
    const viaToken = await adminCall(t, `/devices/${deviceId}/batches/${batchId}/cancel`, { method: 'POST' });
    expect(viaToken.status).to.equal(200);
    const get = await adminCall(t, `/devices/${deviceId}/batches/${batchId}/cancel`);
    expect(get.status).to.equal(405);
    expect(get.headers.get('allow')).to.equal('POST');
  });
});
