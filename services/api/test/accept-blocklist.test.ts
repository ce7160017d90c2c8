import { expect } from 'chai';
import { ACCOUNT_ERRORS, ERRORS, KIND_ERRORS, keys } from '@mgw/contracts';
import { Blocklist, ContactIdentities } from '@mgw/store';
import { RedisMonitor } from '@mgw/testing';
import { call, createToken, freshDeviceId, markConnected, startApi, type TestApi } from './helpers/api.js';

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
    const monitor = await RedisMonitor.start(t.config.redis.url, (args, byScript) => {
      if (!byScript && args.some((a) => a.includes(deviceId))) sent.push(args);
    });
    try {
      expect((await send({ to: '15550003333', text: 'second' })).status).to.equal(202);
      refusedAsBlocked(await send({ to: blocked, text: 'third' }), blocked);
      await new Promise((r) => setTimeout(r, 200));
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
