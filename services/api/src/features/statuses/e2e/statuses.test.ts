import { expect } from 'chai';
import { ERRORS, keys, STATUS_ERRORS, STATUS_JID, STATUS_LIMITS, type SendJobData } from '@mgw/contracts';
import { markLinked, PoolStore } from '@mgw/store';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  type TestApi,
} from '../../../../test/helpers/api.js';
import { adminCall, startAdminApi } from '../../../../test/helpers/admin.js';

type Details = { path: (string | number)[]; message: string }[];

describe('API: status updates — accepted through the send queue, bounded audiences, errors naming the field, device-scoped', function () {
  this.timeout(30_000);
  let t: TestApi;
  let deviceId: string;
  let token: string;
  before(async () => (t = await startAdminApi()));
  beforeEach(async () => {
    deviceId = freshDeviceId();
    await markConnected(t.redis, deviceId);
    await markLinked(t.redis, deviceId);
    token = await createToken(t, { deviceId });
  });
  afterEach(async () => t.services.acceptor.queue(deviceId).obliterate({ force: true }));
  after(async () => t.close());

  const post = (json: unknown, as = token) => call(`${t.api}/statuses`, { method: 'POST', token: as, json });
  const viewers = (n: number, from = 15554000000) => Array.from({ length: n }, (_, i) => String(from + i));
  const jobOf = async (id: string) =>
    (await t.services.acceptor.queue(deviceId).getJob(id))?.data as SendJobData;

  it('When a text status with a background and font is posted to 3 numbers, then one job to status@broadcast carries the audience, as a list of one', async () => {
    const res = await post({
      text: 'Open today until 20:00',
      backgroundColor: '#25D366',
      font: 'calistoga',
      audience: viewers(3),
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    const data = res.body.data as { messageId: string; batchId: string; audienceSize: number };
    expect(data.audienceSize).to.equal(3);
    const job = await jobOf(data.messageId);
    expect(job.to).to.equal(STATUS_JID);
    expect(job.batchId).to.equal(data.batchId);
    const stored = await t.services.contents.get(deviceId, job.contentId);
    expect(stored?.content.status).to.deep.equal({
      audience: viewers(3).map((p) => `${p}@s.whatsapp.net`),
      backgroundColor: '#FF25D366',
      font: 8,
    });
    const batch = await call(`${t.api}/batches/${data.batchId}`, { token });
    expect(batch.status).to.equal(200);
    expect((batch.body.data as { total: number }).total).to.equal(1);
    // One job, whatever the audience: the device's queue holds one message.
    expect(await t.services.acceptor.queue(deviceId).count()).to.equal(1);
    const list = await call(`${t.api}/statuses`, { token });
    expect(list.status).to.equal(200);
    const [first] = (list.body.data as { statuses: Record<string, unknown>[] }).statuses;
    expect(first).to.deep.include({
      messageId: data.messageId,
      status: 'queued',
      kind: 'text',
      audienceSize: 3,
      views: 0,
    });
    // The Batches page (admin API) batches it beside the batches, labelled; a batch of one is not.
    const single = await call(`${t.api}/send`, {
      method: 'POST',
      token,
      json: { to: ['15554100000'], text: 'hi' },
    });
    const lists = await adminCall(t, `/devices/${deviceId}/batches`);
    const byId = new Map(
      (lists.body.data as { batches: { batchId: string; broadcast?: string }[] }).batches.map((b) => [
        b.batchId,
        b,
      ]),
    );
    expect(byId.get(data.batchId)?.broadcast).to.equal('status');
    expect(byId.get(single.body.messageId as string)?.broadcast).to.equal(undefined);
    // The audience is sealed at rest: no number in the clear in the status record.
    const raw = await t.redis.hget(keys.statusRecord(deviceId, data.messageId), 'audience');
    expect(raw).to.not.include(viewers(1)[0]);
  });

  it('When a status is scheduled and its list cancelled, then it reads failed/cancelled and leaves the queue', async () => {
    const sendAt = new Date(Date.now() + 3600_000).toISOString();
    const res = await post({ text: 'Tomorrow: sale', audience: viewers(2), sendAt });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    const { messageId, batchId } = res.body.data as { messageId: string; batchId: string };
    const before = await call(`${t.api}/batches/${batchId}`, { token });
    expect((before.body.data as { counts: { scheduled: number } }).counts.scheduled).to.equal(1);
    const cancelled = await call(`${t.api}/batches/${batchId}/cancel`, { method: 'POST', token });
    expect(cancelled.status, JSON.stringify(cancelled.body)).to.equal(200);
    const record = await call(`${t.api}/messages/${messageId}`, { token });
    expect(record.body.data).to.deep.include({ status: 'failed', error: 'cancelled', to: STATUS_JID });
  });

  it('When a queued status is deleted, then it is taken out of the queue (200 deleted); an unknown id is 404; another device cannot see it', async () => {
    const res = await post({
      text: 'oops',
      audience: viewers(1),
      sendAt: new Date(Date.now() + 60_000).toISOString(),
    });
    const { messageId } = res.body.data as { messageId: string };
    const other = await createToken(t, { deviceId: freshDeviceId() });
    const foreign = await call(`${t.api}/statuses/${messageId}`, { method: 'DELETE', token: other });
    expect(foreign.status).to.equal(404);
    expect(foreign.body).to.deep.equal({ success: false, error: STATUS_ERRORS.notFound });
    const gone = await call(`${t.api}/statuses/${messageId}`, { method: 'DELETE', token });
    expect(gone.status, JSON.stringify(gone.body)).to.equal(200);
    expect(gone.body.data).to.deep.equal({ messageId, status: 'deleted' });
    const again = await call(`${t.api}/statuses/${messageId}`, { method: 'DELETE', token });
    expect(again.status).to.equal(409);
    const unknown = await call(`${t.api}/statuses/00000000-0000-4000-8000-000000000000`, {
      method: 'DELETE',
      token,
    });
    expect(unknown.status).to.equal(404);
    const bad = await call(`${t.api}/statuses/not-an-id`, { method: 'DELETE', token });
    expect(bad.status).to.equal(400);
  });

  it('When bodies are wrong, then each is 400 naming the field, and nothing is queued', async () => {
    const cases: [unknown, string][] = [
      [{ text: 'x' }, 'audience'],
      [{ audience: viewers(1) }, ''],
      [{ text: 'x', audience: [] }, 'audience'],
      [{ text: 'x', audience: ['12'] }, 'audience'],
      [{ text: 'x', audience: ['15551234567', '15551234567'] }, 'audience'],
      [{ text: 'x', audience: 'everyone' }, 'audience'],
      [{ text: 'x', audience: viewers(1), backgroundColor: 'green' }, 'backgroundColor'],
      [{ text: 'x', audience: viewers(1), font: 'comic' }, 'font'],
      [{ text: 'x'.repeat(STATUS_LIMITS.text + 1), audience: viewers(1) }, 'text'],
      [
        { attachment: { type: 'document', url: 'https://example.com/a.pdf' }, audience: viewers(1) },
        'attachment',
      ],
      [
        { attachment: { type: 'audio', url: 'https://example.com/a.ogg' }, text: 'hi', audience: viewers(1) },
        'text',
      ],
      [
        {
          attachment: { type: 'image', url: 'https://example.com/a.jpg' },
          backgroundColor: '#000000',
          audience: viewers(1),
        },
        'backgroundColor',
      ],
      [{ text: 'x', audience: viewers(1), sendAt: '2030-01-01' }, 'sendAt'],
    ];
    for (const [json, field] of cases) {
      const res = await post(json);
      expect(res.status, JSON.stringify(json)).to.equal(400);
      expect(res.body.error).to.equal(ERRORS.invalidRequest);
      const paths = (res.body.details as Details).map((d) => d.path.join('.'));
      expect(
        paths.some((p) => p.startsWith(field)),
        `${JSON.stringify(json)} -> ${JSON.stringify(paths)}`,
      ).to.equal(true);
    }
    expect(await t.services.acceptor.queue(deviceId).count()).to.equal(0);
    // An empty list says the bound, as docs/broadcasts.md does (not "matches none of the types").
    const empty = await post({ text: 'x', audience: [] });
    expect(empty.body.details).to.deep.equal([
      { path: ['audience'], message: 'audience must name 1 to 5,000 viewers' },
    ]);
  });

  it('When the audience is over its bound, listed or as "contacts", then it is refused whole with 400', async () => {
    const over = await post({ text: 'x', audience: viewers(STATUS_LIMITS.audience + 1) });
    expect(over.status).to.equal(400);
    expect((over.body.details as Details)[0]!.path).to.deep.equal(['audience']);
    // The account's chats, as the first-contact cap keeps them.
    const none = await post({ text: 'x', audience: 'contacts' });
    expect(none.status).to.equal(400);
    expect((none.body.details as Details)[0]!.message).to.include('no chats');
    await t.redis.sadd(keys.deviceChats(deviceId), ...viewers(STATUS_LIMITS.audience + 1, 15555000000));
    const tooMany = await post({ text: 'x', audience: 'contacts' });
    expect(tooMany.status).to.equal(400);
    expect((tooMany.body.details as Details)[0]).to.deep.include({ path: ['audience'] });
    expect(await t.services.acceptor.queue(deviceId).count()).to.equal(0);
    await t.redis.del(keys.deviceChats(deviceId));
    await t.redis.sadd(keys.deviceChats(deviceId), '15556000001', '123456789012345@lid');
    const ok = await post({ text: 'to my chats', audience: 'contacts' });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(202);
    const job = await jobOf((ok.body.data as { messageId: string }).messageId);
    const stored = await t.services.contents.get(deviceId, job.contentId);
    expect(stored?.content.status?.audience).to.have.members([
      '15556000001@s.whatsapp.net',
      '123456789012345@lid',
    ]);
  });

  it('When a pool token calls the status routes, then it is 403; the settings are per device and off by default', async () => {
    const devices = [freshDeviceId()];
    await markLinked(t.redis, devices[0]!);
    const poolId = `p${Math.random().toString(36).slice(2, 9)}`;
    await new PoolStore(t.redis).create({ id: poolId, name: 'pool', devices });
    const { value: poolToken } = await t.services.tokens.create({ name: 'pool', poolId });
    for (const [method, path] of [
      ['POST', '/statuses'],
      ['GET', '/statuses'],
      ['GET', '/statuses/settings'],
    ] as const) {
      const res = await call(`${t.api}${path}`, {
        method,
        token: poolToken,
        ...(method === 'POST' ? { json: {} } : {}),
      });
      expect(res.status, path).to.equal(403);
    }
    const initial = await call(`${t.api}/statuses/settings`, { token });
    expect(initial.body.data).to.deep.equal({ receiveStatuses: false });
    const set = await call(`${t.api}/statuses/settings`, {
      method: 'PUT',
      token,
      json: { receiveStatuses: true },
    });
    expect(set.status).to.equal(200);
    expect((await call(`${t.api}/statuses/settings`, { token })).body.data).to.deep.equal({
      receiveStatuses: true,
    });
    const otherToken = await createToken(t, { deviceId: freshDeviceId() });
    expect((await call(`${t.api}/statuses/settings`, { token: otherToken })).body.data).to.deep.equal({
      receiveStatuses: false,
    });
    const bad = await call(`${t.api}/statuses/settings`, {
      method: 'PUT',
      token,
      json: { receiveStatuses: 'yes' },
    });
    expect(bad.status).to.equal(400);
    expect((bad.body.details as Details)[0]!.path).to.deep.equal(['receiveStatuses']);
  });
});
