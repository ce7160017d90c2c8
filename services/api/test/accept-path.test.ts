import { expect } from 'chai';
import type { Job } from 'bullmq';
import { ERRORS, keys, type SendJobData } from '@mgw/contracts';
import type { ContentStore } from '@mgw/store';
import { call, createToken, freshDeviceId, markConnected, startApi, type TestApi } from './helpers/api.js';

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
