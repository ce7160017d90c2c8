import { expect } from 'chai';
import type { SendJobData } from '@mgw/contracts';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  type TestApi,
} from '../../../../test/helpers/api.js';
import { adminCall, signIn, startAdminApi } from '../../../../test/helpers/admin.js';

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
