import { expect } from 'chai';
import type { Job } from 'bullmq';
import { FAILURE_REASONS, keys, type SendJobData } from '@mgw/contracts';
import { ContentStore, Encryption, InboundStore, MessageKindStore } from '@mgw/store';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
} from '../../../../test/helpers/api.js';

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
