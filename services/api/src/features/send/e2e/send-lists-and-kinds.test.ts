import { expect } from 'chai';
import type { Job } from 'bullmq';
import { keys, type SendJobData, FAILURE_REASONS } from '@mgw/contracts';
import { ContentStore, Encryption, getDeviceState, InboundStore, MessageKindStore } from '@mgw/store';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
} from '../../../../test/helpers/api.js';

/**
 * POST /send's route tests beyond a single text, each against the real app and Redis:
 * - personalised lists and scheduled sends;
 * - what a 1,000-recipient list costs Redis;
 * - the message kinds (reaction, location, contact cards, poll) and how GET /messages/{id} reads them.
 * POST /send itself, its edits and deletes: send.test.ts beside this file.
 */

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

/**
 * What a big list costs Redis: its content once plus a job per recipient — never a copy of the
 * text per recipient (1,000 × 60,000 characters used to cost 220 MB).
 */
describe('POST /send at volume (real Redis)', function () {
  this.timeout(120_000);
  let t: TestApi;
  let deviceId: string;
  let token: string;
  before(async () => {
    t = await startApi({ maxRecipients: 1000 });
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    await markConnected(t.redis, deviceId);
  });
  after(async () => {
    await t.services.acceptor.queue(deviceId).obliterate({ force: true });
    await t.close();
  });

  const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await t.redis.info('memory'))?.[1]);
  const list = (round: number) =>
    Array.from({ length: 1000 }, (_, i) => String(15550000000 + round * 1000 + i));

  it('When a 1,000-recipient list carries a 60,000-character text, then Redis grows by the text once plus under 4 KiB per recipient; ten in a row never answer 5xx', async () => {
    const text = 'x'.repeat(60_000);
    const before = await usedMemory();
    const first = await call(`${t.api}/send`, { token, json: { to: list(0), text } });
    expect(first.status).to.equal(202);
    const perRecipient = ((await usedMemory()) - before - text.length) / 1000;
    console.log(`      (Redis growth beyond the text: ${Math.round(perRecipient)} bytes per recipient)`);
    expect(perRecipient).to.be.below(4096);

    const statuses = [first.status];
    for (let round = 1; round < 10; round++) {
      statuses.push((await call(`${t.api}/send`, { token, json: { to: list(round), text } })).status);
    }
    expect(statuses).to.deep.equal(Array.from({ length: 10 }, () => 202));
  });

  it('When a personalised 1,000-recipient list carries a 60,000-character text and three variables each, then Redis grows by the text once plus under 4 KiB per recipient', async () => {
    const text = `Hi {{name}}, your order {{order}} ships from {{city}}. ${'x'.repeat(60_000 - 60)}`;
    const to = list(20).map((phone, i) => ({
      phone,
      vars: { name: `Customer number ${i}`, order: `ORDER-${100_000 + i}`, city: 'Lisbon'.repeat(8) },
    }));
    const before = await usedMemory();
    const res = await call(`${t.api}/send`, { token, json: { to, text } });
    expect(res.status).to.equal(202);
    const perRecipient = ((await usedMemory()) - before - text.length) / 1000;
    console.log(
      `      (personalised: Redis growth beyond the text: ${Math.round(perRecipient)} bytes per recipient)`,
    );
    expect(perRecipient).to.be.below(4096);
  });
});

/**
 * POST /send with a message kind (reaction, location, contacts, poll) and GET /messages/{id}: the
 * rules of each field, the reaction's target, and the record's kind fields (every answer checked
 * against the OpenAPI document by `call`).
 */
describe('POST /send message kinds (reaction, location, contact cards, poll)', () => {
  let t: TestApi;
  let deviceId: string;
  let token: string;
  before(async () => (t = await startApi({ maxRecipients: 100 })));
  beforeEach(async () => {
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    await markConnected(t.redis, deviceId);
  });
  afterEach(async () => {
    await t.services.acceptor.queue(deviceId).obliterate({ force: true });
  });
  after(async () => t.close());

  const send = (json: unknown, as = token) => call(`${t.api}/send`, { token: as, json });
  const get = (id: string) => call(`${t.api}/messages/${id}`, { token });
  const job = async (id: string) =>
    (await t.services.acceptor.queue(deviceId).getJob(id)) as Job<SendJobData>;
  const contentOf = async (id: string) => {
    const j = await job(id);
    return (await new ContentStore(t.redis, Encryption.fromEnv(), 60).get(deviceId, j.data.contentId))
      ?.content;
  };
  const detailPaths = (body: Record<string, unknown>) =>
    (body.details as { path: unknown[] }[]).map((d) => d.path.join('.'));

  it('When a location, contact cards or a poll is sent, then 202, the content holds exactly it and GET /messages/{id} shows it while queued (a poll with an empty tally)', async () => {
    const location = { latitude: 52.52, longitude: 13.405, name: 'Berlin' };
    const contacts = [
      { name: 'Ana', phones: ['15551234567'], email: 'ana@example.com', organization: 'ACME' },
    ];
    const poll = { question: 'Coffee or tea?', options: ['Coffee', 'Tea'] };
    for (const [field, value, shown] of [
      ['location', location, location],
      ['contacts', contacts, contacts],
      [
        'poll',
        poll,
        {
          ...poll,
          multiple: false,
          tally: [
            { option: 'Coffee', votes: 0 },
            { option: 'Tea', votes: 0 },
          ],
          votes: [],
        },
      ],
    ] as const) {
      const res = await send({ to: '15551234567', [field]: value });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const id = String(res.body.messageId);
      const content = (await contentOf(id)) as unknown as Record<string, unknown>;
      expect(content[field]).to.deep.equal(field === 'poll' ? { ...poll, multiple: false } : value);
      const record = await get(id);
      expect(record.status).to.equal(200);
      expect((record.body.data as Record<string, unknown>)[field]).to.deep.equal(shown);
    }
    // GET /messages reads each entry like GET /messages/{id}: the kinds too.
    const list = await call(`${t.api}/messages`, { token });
    const entries = (list.body.data as { messages: Record<string, unknown>[] }).messages;
    expect(entries.map((m) => ['location', 'contacts', 'poll'].find((k) => k in m))).to.deep.equal([
      'poll',
      'contacts',
      'location',
    ]);
  });

  it('When a body breaks a kind rule, then 400 with the detail of each problem', async () => {
    const to = '15551234567';
    const cases: [Record<string, unknown>, string[]][] = [
      [{ to, location: { latitude: 1, longitude: 2 }, text: 'hi' }, ['location']],
      [
        { to, poll: { question: 'Q', options: ['a', 'b'] }, location: { latitude: 1, longitude: 2 } },
        ['location'],
      ],
      [{ to, location: { latitude: 90.5, longitude: -181 } }, ['location.latitude', 'location.longitude']],
      [{ to, location: { latitude: 1, longitude: 2, name: 'x'.repeat(257) } }, ['location.name']],
      [{ to, reaction: { messageId: 'm', emoji: 'ok' } }, ['reaction.emoji']],
      [{ to, reaction: { messageId: 'm', emoji: '👍👍' } }, ['reaction.emoji']],
      [{ to, reaction: { messageId: 'm', emoji: '👍' }, existingMessageId: 'x' }, ['reaction']],
      [{ to, poll: { question: 'Q', options: ['a'] } }, ['poll.options']],
      [{ to, poll: { question: 'Q', options: ['a', 'a'] } }, ['poll.options.1']],
      [
        { to, poll: { question: 'Q', options: Array.from({ length: 13 }, (_, i) => `o${i}`) } },
        ['poll.options'],
      ],
      [{ to, poll: { question: 'Q\nEND', options: ['a', 'b'] } }, ['poll.question']],
      [{ to, contacts: [] }, ['contacts']],
      [
        { to, contacts: Array.from({ length: 11 }, () => ({ name: 'n', phones: ['15551234567'] })) },
        ['contacts'],
      ],
      [{ to, contacts: [{ name: 'A\r\nTEL:+1', phones: ['15551234567'] }] }, ['contacts.0.name']],
      [{ to, contacts: [{ name: 'A', phones: ['+1 555'] }] }, ['contacts.0.phones.0']],
      [
        { to, contacts: [{ name: 'A', phones: ['15551234567'], email: 'not an email' }] },
        ['contacts.0.email'],
      ],
    ];
    for (const [body, paths] of cases) {
      const res = await send(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.error).to.equal('Invalid request data');
      expect(detailPaths(res.body), JSON.stringify(body)).to.deep.equal(paths);
    }
    // No content at all still names text and attachment, as the spec's error does.
    const none = await send({ to });
    expect(detailPaths(none.body)).to.deep.equal(['text.attachment']);
  });

  it("When a reaction names a message, then its target is resolved (ours: fromMe, a contact's: not); unknown or another device's is 404, a failed one 409, another chat 400", async () => {
    const contact = '15551234567';
    const ours = String((await send({ to: contact, text: 'hello' })).body.messageId);
    const reacted = await send({ to: contact, reaction: { messageId: ours, emoji: '👍' } });
    expect(reacted.status, JSON.stringify(reacted.body)).to.equal(202);
    const target = (await job(ours)).data.platformMessageId;
    expect((await contentOf(String(reacted.body.messageId)))?.reactionTarget).to.deep.equal({
      platformMessageId: target,
      fromMe: true,
    });

    // What a contact wrote (with its identity, as records name contacts).
    const wrote = {
      platformMessageId: '3EB0AABBCCDDEEFF0011',
      from: contact,
      contact: { phone: contact },
      text: 'hi there',
      receivedAt: new Date(),
    };
    const inbound = await new InboundStore(t.redis, Encryption.fromEnv(), 600).record(deviceId, wrote);
    const back = await send({ to: [contact], reaction: { messageId: inbound!, emoji: '' } });
    expect(back.status, JSON.stringify(back.body)).to.equal(202);
    expect((await contentOf(String((back.body.messageIds as string[])[0])))?.reactionTarget).to.deep.equal({
      platformMessageId: '3EB0AABBCCDDEEFF0011',
      fromMe: false,
    });

    const unknown = await send({ to: contact, reaction: { messageId: 'nope', emoji: '👍' } });
    expect(unknown.status).to.equal(404);
    expect(unknown.body).to.deep.include({ success: false, error: 'The message to react to was not found' });
    const otherDevice = freshDeviceId();
    await markConnected(t.redis, otherDevice);
    const foreign = await send(
      { to: contact, reaction: { messageId: ours, emoji: '👍' } },
      await createToken(t, { deviceId: otherDevice }),
    );
    expect(foreign.status).to.equal(404);
    await t.services.acceptor.queue(otherDevice).obliterate({ force: true });

    const elsewhere = await send({ to: '15557654321', reaction: { messageId: ours, emoji: '👍' } });
    expect(elsewhere.status).to.equal(400);
    expect(detailPaths(elsewhere.body)).to.deep.equal(['to']);
    const many = await send({ to: [contact, '15557654321'], reaction: { messageId: ours, emoji: '👍' } });
    expect(many.status).to.equal(400);

    await t.services.messages.markFailed((await job(ours)).data, FAILURE_REASONS.invalidNumber);
    const failed = await send({ to: contact, reaction: { messageId: ours, emoji: '👍' } });
    expect(failed.status).to.equal(409);
    expect(failed.body.error).to.equal('The message to react to was never sent');
  });

  it('When a poll is kept on its record and contacts vote, then the fields are sealed at rest, the tally counts each latest vote and the record shows it', async () => {
    const poll = { question: 'Secret question?', options: ['Yes', 'No'], multiple: false };
    const id = String((await send({ to: '15551234567', poll })).body.messageId);
    const j = await job(id);
    await t.services.messages.markSent(j.data, new Date());
    const kinds = new MessageKindStore(t.redis, Encryption.fromEnv(), 600);
    await kinds.keep(deviceId, id, { poll });
    const secret = await kinds.pollSecret(deviceId, id);
    expect(await kinds.pollSecret(deviceId, id)).to.deep.equal(secret);
    for (const [phone, options] of [
      ['15550000001', ['Yes']],
      ['15550000002', ['No']],
      ['15550000001', ['No']],
    ] as const) {
      await kinds.recordVote(deviceId, id, {
        contact: { phone },
        options: [...options],
        at: new Date(),
        platformMessageId: `vote-${phone}-${options[0]}`,
      });
    }
    const raw = await t.redis.hgetall(keys.message(deviceId, id));
    expect(JSON.stringify(raw)).to.not.include('Secret question');
    expect(JSON.stringify(raw)).to.not.include('"No"');
    const data = (await get(id)).body.data as { poll: { tally: unknown; votes: { contact: unknown }[] } };
    expect(data.poll.tally).to.deep.equal([
      { option: 'Yes', votes: 0 },
      { option: 'No', votes: 2 },
    ]);
    expect(data.poll.votes.map((v) => v.contact)).to.have.deep.members([
      { phone: '15550000001' },
      { phone: '15550000002' },
    ]);
    // The request's content had no bytes (no text): settling its last message released it.
    expect(await t.redis.exists(keys.content(deviceId, j.data.contentId))).to.equal(0);
  });
});
