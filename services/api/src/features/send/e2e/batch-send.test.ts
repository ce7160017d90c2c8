import { expect } from 'chai';
import type { Job } from 'bullmq';
import { keys, type SendJobData } from '@mgw/contracts';
import { ContentStore, Encryption, getDeviceState } from '@mgw/store';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
} from '../../../../test/helpers/api.js';

/** POST /send with personalised entries and `sendAt`: what is stored, and how records and batches read (answers checked against the OpenAPI document). */
describe('POST /send: personalised lists and scheduled sends (real Redis)', () => {
  let t: TestApi;
  let deviceId: string;
  let token: string;
  before(async () => (t = await startApi({ maxRecipients: 1000, acceptChunkRecipients: 2 })));
  beforeEach(async () => {
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    await markConnected(t.redis, deviceId);
  });
  afterEach(async () => {
    await t.services.acceptor.queue(deviceId).obliterate({ force: true });
  });
  after(async () => t.close());

  const send = (json: unknown) => call(`${t.api}/send`, { token, json });
  const get = (path: string) => call(`${t.api}${path}`, { token });
  const job = async (id: string) =>
    (await t.services.acceptor.queue(deviceId).getJob(id)) as Job<SendJobData>;
  const contents = () => new ContentStore(t.redis, Encryption.fromEnv(), 60);

  it('When a batch is personalised, then the content is stored once with its placeholders, each recipient’s used variables sealed beside it, and their bytes counted against the quota', async () => {
    const to = [
      { phone: '15551230001', vars: { name: 'Ana', unused: 'not stored' } },
      { phone: '15551230002', vars: { name: 'Bo' } },
      { phone: '15551230003', vars: { name: 'Cy' } },
    ];
    // Three recipients in pieces of two: the batch is accepted in two transactions.
    const res = await send({ to, text: 'Hi {{name}}' });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    const ids = res.body.messageIds as string[];
    const jobs = await Promise.all(ids.map(job));
    expect(new Set(jobs.map((j) => j.data.contentId)).size).to.equal(1);
    for (const j of jobs) expect(JSON.stringify(j.data)).to.not.match(/Ana|Bo"|Cy|Hi /);
    const { contentId } = jobs[0]!.data;
    expect((await contents().get(deviceId, contentId))?.content).to.deep.equal({
      text: 'Hi {{name}}',
      personalised: true,
    });
    expect(await contents().vars(deviceId, contentId, ids[0]!)).to.deep.equal({ name: 'Ana' });
    expect(await contents().vars(deviceId, contentId, ids[2]!)).to.deep.equal({ name: 'Cy' });
    const raw = await t.redis.hgetall(keys.content(deviceId, contentId));
    expect(Object.keys(raw).filter((k) => k.startsWith('vars:'))).to.have.length(3);
    expect(Object.values(raw).join('|')).to.not.include('Ana');
    const varsBytes = ContentStore.varsSize([{ name: 'Ana' }, { name: 'Bo' }, { name: 'Cy' }]);
    expect(Number(raw.bytes)).to.equal('Hi {{name}}'.length + varsBytes);
    expect((await getDeviceState(t.redis, deviceId)).queuedBytes).to.equal('Hi {{name}}'.length + varsBytes);
  });

  it('When objects carry variables the text does not use, or all entries are plain numbers, then no variables are stored and the text is sent as written', async () => {
    const mixed = await send({
      to: ['15551230001', { phone: '15551230002', vars: { name: 'Bo' } }],
      text: 'Hello',
    });
    expect(mixed.status).to.equal(202);
    const j = await job((mixed.body.messageIds as string[])[1]!);
    expect((await contents().get(deviceId, j.data.contentId))?.content).to.deep.equal({ text: 'Hello' });
    const plain = await send({ to: ['15551230003'], text: 'Hello {{name}}' });
    expect(plain.status).to.equal(202);
    const p = await job((plain.body.messageIds as string[])[0]!);
    expect((await contents().get(deviceId, p.data.contentId))?.content).to.deep.equal({
      text: 'Hello {{name}}',
    });
  });

  it('When a variable is missing, too many, too long or makes the caption too long, then 400 with the recipient’s path', async () => {
    const missing = await send({
      to: [{ phone: '15551230001', vars: {} }],
      text: 'a',
      attachment: { type: 'image', url: 'https://example.com/a.png', caption: 'for {{who}}' },
    });
    expect(missing.status).to.equal(400);
    expect(missing.body.details).to.deep.equal([
      { path: ['to', 0, 'vars', 'who'], message: 'to[0].vars must include who' },
    ]);
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`v${i}`, 'x']));
    const tooMany = await send({ to: [{ phone: '15551230001', vars: many }], text: 'a' });
    expect(tooMany.status).to.equal(400);
    expect((tooMany.body.details as { path: unknown[] }[])[0]!.path).to.deep.equal(['to', 0, 'vars']);
    const longName = await send({
      to: [{ phone: '15551230001', vars: { ['n'.repeat(33)]: 'x' } }],
      text: 'a',
    });
    expect(longName.status).to.equal(400);
    const big = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`v${i}`, 'x'.repeat(250)]));
    const tooBig = await send({ to: ['15551230009', { phone: '15551230001', vars: big }], text: 'a' });
    expect(tooBig.status).to.equal(400);
    expect(tooBig.body.details).to.deep.equal([
      { path: ['to', 1, 'vars'], message: 'to[1].vars holds more than 2048 characters' },
    ]);
    const longCaption = await send({
      to: [{ phone: '15551230001', vars: { who: 'y'.repeat(256) } }],
      attachment: { type: 'image', url: 'https://example.com/a.png', caption: `${'c'.repeat(800)}{{who}}` },
    });
    expect(longCaption.status).to.equal(400);
    expect(longCaption.body.details).to.deep.equal([
      {
        path: ['to', 0, 'vars'],
        message: 'to[0]: the caption with its variables is longer than 1024 characters',
      },
    ]);
    const dup = await send({ to: ['15551230001', { phone: '15551230001' }], text: 'a' });
    expect(dup.status).to.equal(400);
    expect((dup.body.details as { message: string }[])[0]!.message).to.equal(
      'to lists the same phone number twice',
    );
    expect(await t.services.acceptor.queue(deviceId).getJobCounts()).to.include({
      waiting: 0,
      delayed: 0,
      prioritized: 0,
    });
  });

  it('When a batch has sendAt ahead, then its jobs are delayed until then, its records read scheduled with sendAt, its batch counts them, and they count against the quota', async () => {
    const sendAt = new Date(Date.now() + 3600_000);
    const res = await send({
      to: ['15551230001', '15551230002', '15551230003'],
      text: 'later',
      sendAt: sendAt.toISOString(),
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    const ids = res.body.messageIds as string[];
    for (const id of ids) {
      const j = await job(id);
      expect(await j.getState()).to.equal('delayed');
      expect(j.opts.delay).to.be.within(3590_000, 3600_000);
      const record = await get(`/messages/${id}`);
      expect(record.status).to.equal(200);
      expect(record.body.data).to.deep.include({
        status: 'scheduled',
        sendAt: sendAt.toISOString(),
        held: { reason: 'scheduled', until: sendAt.toISOString() },
      });
    }
    const batch = await get(`/batches/${String(res.body.messageId)}`);
    expect(batch.body.data).to.deep.include({
      total: 3,
      sendAt: sendAt.toISOString(),
      counts: { scheduled: 3, queued: 0, sent: 0, delivered: 0, read: 0, failed: 0, deleted: 0, held: 0 },
    });
    const listed = await get(`/messages?status=scheduled`);
    expect((listed.body.data as { messages: unknown[] }).messages).to.have.length(3);
    expect((await get(`/messages?status=queued`)).body.data).to.deep.equal({ messages: [] });
    expect((await getDeviceState(t.redis, deviceId)).queuedMessages).to.equal(3);
  });

  it('When sendAt is in the past, then the job is not delayed and its record carries no sendAt', async () => {
    const res = await send({ to: '15551230001', text: 'now', sendAt: '2001-01-01T00:00:00+05:00' });
    expect(res.status).to.equal(202);
    const j = await job(String(res.body.messageId));
    expect(j.opts.delay ?? 0).to.equal(0);
    expect(j.data.sendAt).to.equal(undefined);
    const record = await get(`/messages/${String(res.body.messageId)}`);
    expect(record.body.data).to.include({ status: 'queued' });
    expect(record.body.data).to.not.have.property('sendAt');
  });
});
