import { expect } from 'chai';
import type { Job } from 'bullmq';
import { ACCOUNT_ERRORS, ERRORS, KIND_ERRORS, keys, type SendJobData } from '@mgw/contracts';
import { Blocklist, ContactIdentities, type ContentStore } from '@mgw/store';
import { RedisMonitor, waitFor } from '@mgw/testing';
import { call, createToken, freshDeviceId, markConnected, startApi, type TestApi } from './helpers/api.js';

// The accept path of /send, against the real app and Redis: how requests become transactions
// (shared by requests arriving together, long lists accepted in pieces), and a blocked recipient
// refused by the accept call itself.

const NO_DEVICE = { success: false, error: 'No connected messenger device found' };

/**
 * How requests become transactions: requests for one device that arrive together share one
 * (each still admitted or refused on its own), and a list longer than ACCEPT_CHUNK_RECIPIENTS is
 * accepted in pieces, held unsent until its last piece commits, and refused whole if any fails.
 */
describe('API accept path: shared transactions and lists in pieces', () => {
  let t: TestApi;
  let deviceId: string;
  let token: string;
  before(async () => (t = await startApi({ acceptChunkRecipients: 10, maxRecipients: 1000 })));
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
  const jobs = async () =>
    (await t.services.acceptor.queue(deviceId).getJobs(['prioritized', 'waiting'])) as Job<SendJobData>[];
  const contents = () =>
    (t.services.acceptor as unknown as { deps: { contents: ContentStore } }).deps.contents;

  it('When 20 requests for one device arrive at once, then each is accepted with its own message, job and content', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => send({ to: String(15551000000 + i), text: `hello ${i}` })),
    );
    expect(results.map((r) => r.status)).to.deep.equal(Array(20).fill(202));
    const ids = results.map((r) => String(r.body.messageId));
    expect(new Set(ids).size).to.equal(20);
    const queued = await jobs();
    expect(queued.map((j) => j.id).sort()).to.deep.equal([...ids].sort());
    for (const [i, id] of ids.entries()) {
      const job = queued.find((j) => j.id === id)!;
      expect(job.data.to).to.equal(String(15551000000 + i));
      expect((await contents().get(deviceId, job.data.contentId))?.content).to.deep.equal({
        text: `hello ${i}`,
      });
    }
    expect(await t.redis.hget(keys.deviceQueue(deviceId), 'messages')).to.equal('20');
  });

  it('When requests arriving together would overfill the device queue, then those that fit are accepted and the rest get 429', async () => {
    const limit = t.config.deviceQuota.maxQueuedMessages;
    await t.redis.hset(keys.deviceQueue(deviceId), 'messages', limit - 3);
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => send({ to: String(15552000000 + i), text: 'x' })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).to.deep.equal([202, 202, 202, 429, 429]);
    for (const refused of results.filter((r) => r.status === 429)) {
      expect(refused.body).to.include({ success: false, error: ERRORS.deviceQueueFull });
    }
    expect(await jobs()).to.have.length(3);
    expect(await t.redis.hget(keys.deviceQueue(deviceId), 'messages')).to.equal(String(limit));
  });

  it('When a list is longer than a piece, then it is accepted whole in pieces: every job in `to` order, one content counting all of them, no hold left', async () => {
    const to = Array.from({ length: 25 }, (_, i) => String(15553000000 + i));
    const res = await send({ to, text: 'list in pieces' });
    expect(res.status).to.equal(202);
    const ids = res.body.messageIds as string[];
    expect(ids).to.have.length(25);
    const queued = await jobs();
    expect(queued).to.have.length(25);
    const byId = new Map(queued.map((j) => [j.id, j]));
    expect(ids.map((id) => byId.get(id)!.data.to)).to.deep.equal(to);
    const contentIds = new Set(queued.map((j) => j.data.contentId));
    expect(contentIds.size).to.equal(1);
    const [contentId] = [...contentIds];
    const content = await t.redis.hgetall(keys.content(deviceId, contentId!));
    expect(content).to.include({ remaining: '25', bytes: String('list in pieces'.length) });
    expect(content).to.not.have.property('heldUntil');
    expect(await t.redis.hgetall(keys.deviceQueue(deviceId))).to.deep.equal({
      messages: '25',
      bytes: String('list in pieces'.length),
    });
    expect(queued.every((j) => j.data.batchId === res.body.messageId)).to.equal(true);
  });

  it('When the device is logged out while a list is being accepted in pieces, then 409 and nothing of the list is left queued', async () => {
    // The logout lands between two pieces: right when the second piece is built.
    const store = contents();
    const original = store.stageMore.bind(store);
    let bumped = false;
    store.stageMore = (multi, dev, contentId, messages) => {
      if (!bumped && dev === deviceId) {
        bumped = true;
        void t.redis.hincrby(keys.session(deviceId), 'linkGeneration', 1);
      }
      original(multi, dev, contentId, messages);
    };
    try {
      const to = Array.from({ length: 35 }, (_, i) => String(15554000000 + i));
      const res = await send({ to, text: 'logged out mid-list' });
      expect(res.status).to.equal(409);
      expect(res.body).to.deep.equal(NO_DEVICE);
    } finally {
      store.stageMore = original;
    }
    expect(bumped).to.equal(true);
    expect(await jobs()).to.deep.equal([]);
    expect(await t.redis.keys(keys.content(deviceId, '*'))).to.deep.equal([]);
    const quota = await t.redis.hgetall(keys.deviceQueue(deviceId));
    expect(Number(quota.messages ?? 0)).to.equal(0);
    expect(Number(quota.bytes ?? 0)).to.equal(0);
  });

  it('While a list is accepted in pieces, then other requests for the device are answered in between', async () => {
    const to = Array.from({ length: 400 }, (_, i) => String(15555000000 + i));
    const list = send({ to, text: 'long list' });
    const single = send({ to: '15556000000', text: 'single' });
    const [l, s] = await Promise.all([list, single]);
    expect([l.status, s.status]).to.deep.equal([202, 202]);
    expect(await jobs()).to.have.length(401);
  });
});

/**
 * A single recipient on the account's blocklist is looked for by the accept call that would write
 * the message (no round trip of its own before it: issue 53 measured that read as most of what
 * /send had lost). The answers are those of a check made first: a blocked number is 422 whatever
 * else the request lacks or the device's state, over the rate limit 429, and nothing is queued.
 */
describe('API accept path: a blocked recipient refused by the accept call', () => {
  let t: TestApi;
  let deviceId: string;
  let token: string;
  const blocked = '15557654321';
  const blockedLid = '998877665544@lid';
  const NOTHING_QUEUED = 'nothing queued';

  before(async () => (t = await startApi({ rateLimits: { send: 5 } })));
  beforeEach(async () => {
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    await markConnected(t.redis, deviceId);
    // The blocklist names the contact by its LID only: a send to its number is found through the map.
    await new ContactIdentities(t.redis).learn(deviceId, [{ phone: blocked, lid: blockedLid }]);
    await new Blocklist(t.redis).replace(deviceId, [blockedLid]);
  });
  afterEach(async () => {
    await t.services.acceptor.queue(deviceId).obliterate({ force: true });
  });
  after(async () => t.close());

  const send = (json: unknown) => call(`${t.api}/send`, { token, json });
  const queued = async () => t.redis.zcard(keys.messageIndex(deviceId));
  const refusedAsBlocked = (res: Awaited<ReturnType<typeof send>>, to: string) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(422);
    expect(res.body).to.deep.equal({
      success: false,
      error: ACCOUNT_ERRORS.recipientBlocked,
      details: [{ path: ['to'], message: `${to} is on this account's blocklist` }],
    });
  };

  it('When a single send is accepted, then the API sends Redis one command for it: the accept call, which looks for the number on the blocklist too', async () => {
    // The first send reads the device's link generation once; the next ones know it.
    expect((await send({ to: '15550002222', text: 'first' })).status).to.equal(202);
    const sent: string[][] = [];
    const marker = `monitor-marker-${Math.random().toString(36).slice(2)}`;
    let markerSeen = false;
    const monitor = await RedisMonitor.start(t.config.redis.url, (args, byScript) => {
      if (args.includes(marker)) markerSeen = true;
      if (!byScript && args.some((a) => a.includes(deviceId))) sent.push(args);
    });
    try {
      expect((await send({ to: '15550003333', text: 'second' })).status).to.equal(202);
      refusedAsBlocked(await send({ to: blocked, text: 'third' }), blocked);
      // Every command of the two requests is seen once one sent after them is: MONITOR shows them
      // in the order Redis ran them (a sleep could end before a loaded host's monitor caught up).
      await t.redis.echo(marker);
      await waitFor(() => markerSeen, { intervalMs: 10, what: 'the marker seen' });
    } finally {
      monitor.close();
    }
    expect(sent.map((args) => args[0]!.toLowerCase())).to.deep.equal(['evalsha', 'evalsha']);
  });

  it('When a blocked number is sent to by its number or its LID, then 422 and nothing is queued; a list with it is accepted', async () => {
    const before = await queued();
    refusedAsBlocked(await send({ to: blocked, text: 'hi' }), blocked);
    refusedAsBlocked(await send({ to: blockedLid, text: 'hi' }), blockedLid);
    expect(await queued(), NOTHING_QUEUED).to.equal(before);
    const list = await send({ to: [blocked, '15551112222'], text: 'hi' });
    expect(list.status, 'each blocked recipient of a list fails on its own').to.equal(202);
  });

  it('When a request to a blocked number has another problem found before its accept call, then it is refused as blocked', async () => {
    const before = await queued();
    const media = await send({
      to: blocked,
      attachment: { type: 'image', mediaId: `med_${'a'.repeat(22)}` },
    });
    refusedAsBlocked(media, blocked);
    const reaction = await send({ to: blocked, reaction: { messageId: 'no-such-message', emoji: '👍' } });
    refusedAsBlocked(reaction, blocked);
    expect(await queued(), NOTHING_QUEUED).to.equal(before);
    // The same problems to a number not blocked are their own refusals.
    const otherMedia = await send({
      to: '15550004444',
      attachment: { type: 'image', mediaId: `med_${'a'.repeat(22)}` },
    });
    expect(otherMedia.status).to.equal(404);
    expect(otherMedia.body.error).to.equal(ERRORS.mediaObjectNotFound);
    const otherReaction = await send({
      to: '15550004444',
      reaction: { messageId: 'no-such-message', emoji: '👍' },
    });
    expect(otherReaction.status).to.equal(404);
    expect(otherReaction.body.error).to.equal(KIND_ERRORS.reactionTargetNotFound);
  });

  it('When the device takes no messages, then a blocked number is still refused as blocked, another with 409', async () => {
    await t.redis.hset(keys.session(deviceId), 'status', 'disconnected');
    refusedAsBlocked(await send({ to: blocked, text: 'hi' }), blocked);
    expect((await send({ to: '15550005555', text: 'hi' })).status).to.equal(409);
  });

  it('When sends to a blocked number go over the rate limit, then each counts its hit: 422 with the headers, then 429', async () => {
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await send({ to: blocked, text: `hi ${i}` }));
    expect(answers.map((a) => a.status)).to.deep.equal([422, 422, 422, 422, 422, 429]);
    expect(answers.map((a) => a.headers.get('x-ratelimit-remaining'))).to.deep.equal([
      '4',
      '3',
      '2',
      '1',
      '0',
      '0',
    ]);
    expect(answers[5]!.body.error).to.equal(ERRORS.rateLimited);
  });
});
