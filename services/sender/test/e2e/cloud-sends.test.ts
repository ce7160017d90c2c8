import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { startCloudSim, type CloudSimHandle, type SentMessage } from '@mgw/cloud-sim';
import { keys, sendQueueName, BULL_PREFIX } from '@mgw/contracts';
import { CloudDeviceStore } from '@mgw/store';
import {
  queueMessages,
  reportFailedTest,
  Stack,
  startFaultProxy,
  waitFor,
  type FaultProxy,
} from '@mgw/testing';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';

/**
 * A cloud device end to end: the real API, connection and sender processes, a real Redis, and
 * the Cloud API simulator (libs/cloud-sim) as Meta's Graph API, reached through a TCP proxy the
 * crash test blackholes. The device is configured in the store as `/cloud` and `/connect` leave it
 * (configuration, profile, state, listed, announced); messages, templates among them, go through
 * POST /send (the groups, channels and LIDs the API would refuse, through the store's accept path).
 */
describe('e2e: a cloud device sends through the Graph API (real services, Cloud API simulator)', function () {
  this.timeout(180_000);
  const number = {
    id: '1001',
    wabaId: '2001',
    displayPhoneNumber: '+1 555-010-0001',
    verifiedName: 'Cloud Shop',
    accessToken: 'token-cloud-1',
    appSecret: 'secret-cloud-1',
  };
  let cloud: CloudSimHandle;
  let proxy: FaultProxy;
  let stack: Stack;
  let devices: CloudDeviceStore;
  let seq = 0;
  /** A fresh contact per use: the simulator's pair rate counts per contact. */
  const contact = () => `1555020${String(++seq).padStart(4, '0')}`;

  async function configure(throughputPerSecond: number): Promise<void> {
    await devices.set(stack.deviceId, {
      phoneNumberId: number.id,
      wabaId: number.wabaId,
      accessToken: number.accessToken,
      appSecret: number.appSecret,
      verifyToken: 'verify-cloud-1',
      throughputPerSecond,
    });
  }

  before(async () => {
    // The simulator allows 2 messages a minute to one contact (our own pair rate allows 10), so a
    // third one meets its 131056.
    cloud = await startCloudSim({ numbers: [number], pairRate: { limit: 2, windowMs: 60_000 } });
    proxy = await startFaultProxy({ port: Number(new URL(cloud.url).port) });
    stack = await Stack.start({
      env: { CLOUD_GRAPH_URL: proxy.via(cloud.url), CLOUD_GRAPH_TIMEOUT_MS: '120000' },
    });
    devices = new CloudDeviceStore(stack.redis, stack.encryption);
    await configure(80);
    await devices.keepProfile(stack.deviceId, {
      displayPhoneNumber: number.displayPhoneNumber,
      verifiedName: number.verifiedName,
      qualityRating: 'GREEN',
      messagingLimitTier: 'TIER_1K',
      checkedAt: new Date().toISOString(),
    });
    await devices.setState(stack.deviceId, { status: 'connected', at: new Date().toISOString() });
    await stack.redis.sadd(keys.linkedDevices(), stack.deviceId);
    await stack.redis.publish(keys.devicesChannel(), stack.deviceId);
    await waitFor(() => stack.senders().some((s) => s.output.some((l) => l.includes('"engine":"cloud"'))), {
      what: 'the sender claiming the cloud device',
    });
  });
  after(async () => {
    await stack?.stop();
    await proxy?.stop();
    await cloud?.close();
  });
  afterEach(function () {
    reportFailedTest(this.currentTest, stack);
  });

  /** The contact writes: the simulator opens its window, and the store keeps it as the webhook does. */
  async function openWindow(phone: string): Promise<void> {
    cloud.inbound(number.id, { from: phone, text: 'hello' });
    await devices.keepWindow(stack.deviceId, phone, Date.now());
  }

  interface Rec {
    status: string;
    platformMessageId: string;
    error?: string;
    held?: { reason: string };
    engine?: string;
  }

  async function send(body: Record<string, unknown>): Promise<string> {
    const res = await stack.api<{ messageId: string }>('POST', '/send', body);
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    return res.body.messageId;
  }

  async function record(messageId: string): Promise<Rec> {
    return (await stack.api<{ data: Rec }>('GET', `/messages/${messageId}`)).body.data;
  }

  async function settled(messageId: string): Promise<Rec> {
    let rec: Rec | undefined;
    await waitFor(async () => (rec = await record(messageId)).status !== 'queued', {
      timeoutMs: 60_000,
      what: `message ${messageId} leaving queued`,
    });
    return rec!;
  }

  /** The device's send queue, read by the test (its jobs' attempts): `done()` closes it and its connection. */
  function sendQueue() {
    const connection = new Redis(stack.redisUrl, { maxRetriesPerRequest: null });
    const queue = new Queue(sendQueueName(stack.deviceId), { connection, prefix: BULL_PREFIX });
    return Object.assign(queue, {
      done: async () => {
        await queue.close();
        await connection.quit();
      },
    });
  }

  const sentWith = (messageId: string): SentMessage[] =>
    cloud.sent(number.id).filter((m) => m.request.biz_opaque_callback_data === messageId);

  it('When a text with a link goes to a contact with an open window, then the simulator gets it with preview_url and our messageId, and the record takes the wamid', async () => {
    const to = contact();
    await openWindow(to);
    const id = await send({ to, text: 'Your order: https://shop.example/o/1' });
    const rec = await settled(id);
    expect(rec.status).to.equal('sent');
    // The record says which engine sent it (issue 83 item 5).
    expect(rec.engine).to.equal('cloud');
    const [graph] = sentWith(id);
    expect(graph, 'the message at the simulator').to.not.equal(undefined);
    expect(graph!.request.text).to.deep.equal({
      body: 'Your order: https://shop.example/o/1',
      preview_url: true,
    });
    expect(rec.platformMessageId)
      .to.equal(graph!.id)
      .and.match(/^wamid\./);
    expect(await stack.redis.get(keys.messageByPlatformId(stack.deviceId, graph!.id))).to.equal(id);
    const plain = await send({ to, text: 'no preview https://shop.example/o/2', linkPreview: false });
    await settled(plain);
    expect((sentWith(plain)[0]!.request.text as { preview_url: boolean }).preview_url).to.equal(false);
  });

  it('When a list names a contact with no open window, then the API takes the list, its text to that contact fails window_closed in the sender and the Graph API is never called for it', async () => {
    // One recipient alone is refused at /send (422); a list is taken whole and judged per recipient.
    const [closed, open] = [contact(), contact()];
    await openWindow(open);
    const res = await stack.api<{ messageIds: string[] }>('POST', '/send', {
      to: [closed, open],
      text: 'a list',
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    const [shut, sent] = res.body.messageIds;
    expect(await settled(shut!)).to.include({ status: 'failed', error: 'window_closed' });
    expect((await settled(sent!)).status).to.equal('sent');
    expect(cloud.sent(number.id).filter((m) => m.waId === closed)).to.deep.equal([]);
  });

  it('When a message is for a group, a channel or a LID, then it fails invalid_number: the Cloud API sends to phone numbers only', async () => {
    const to = ['120363000000000001@g.us', '120363000000000002@newsletter', '123456789012345@lid'];
    const { jobs, queue } = await queueMessages({ redis: stack.redis, deviceId: stack.deviceId, to });
    await queue.close();
    for (const job of jobs)
      expect(await settled(job.messageId), job.to).to.include({ status: 'failed', error: 'invalid_number' });
    for (const job of jobs) expect(sentWith(job.messageId)).to.deep.equal([]);
  });

  it('When an image goes to a list of 3, then it is uploaded once and each message names the same media id, with its caption', async () => {
    const to = [contact(), contact(), contact()];
    for (const phone of to) await openWindow(phone);
    // A PNG's signature, then noise: the upload's type comes from the bytes.
    const png = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      randomBytes(600),
    ]);
    await send({ to, attachment: { type: 'image', base64: png.toString('base64'), caption: 'Catalogue' } });
    let images: SentMessage[] = [];
    await waitFor(() => (images = cloud.sent(number.id).filter((m) => to.includes(m.waId))).length === 3, {
      timeoutMs: 60_000,
      what: 'three images at the simulator',
    });
    const media = images.map((m) => m.request.image as { id: string; caption: string });
    expect(new Set(media.map((m) => m.id)).size, 'one upload, one media id').to.equal(1);
    expect(media.every((m) => m.caption === 'Catalogue')).to.equal(true);
    expect(images.every((m) => typeof m.request.biz_opaque_callback_data === 'string')).to.equal(true);
  });

  it('When a text replies to our sent message and a reaction targets it, then context.message_id and reaction.message_id are its wamid', async () => {
    const to = contact();
    await openWindow(to);
    const first = await send({ to, text: 'Which size?' });
    const target = await settled(first);
    const reply = await send({ to, text: 'M, please', existingMessageId: first });
    expect((await settled(reply)).status).to.equal('sent');
    expect(sentWith(reply)[0]!.request.context).to.deep.equal({ message_id: target.platformMessageId });
    // The simulator's pair rate (2 a minute to one contact) is spent: the reaction goes to a new window.
    const other = contact();
    await openWindow(other);
    const base = await send({ to: other, text: 'New arrivals' });
    const based = await settled(base);
    const reaction = await send({ to: other, reaction: { messageId: base, emoji: '👍' } });
    expect((await settled(reaction)).status).to.equal('sent');
    expect(sentWith(reaction)[0]!.request.reaction).to.deep.equal({
      message_id: based.platformMessageId,
      emoji: '👍',
    });
  });

  it('When a template goes to a contact with no window, then it is sent as the Graph template object and the record takes the wamid', async () => {
    const to = contact();
    const components = [{ type: 'body', parameters: [{ type: 'text', text: '#1234' }] }];
    const id = await send({ to, template: { name: 'order_update', language: 'en_US', components } });
    const rec = await settled(id);
    expect(rec.status).to.equal('sent');
    const [graph] = sentWith(id);
    expect(graph!.type).to.equal('template');
    expect(graph!.request.template).to.deep.equal({
      name: 'order_update',
      language: { code: 'en_US' },
      components,
    });
    expect(rec.platformMessageId).to.equal(graph!.id);
  });

  it('When the messaging tier (TIER_1K) is used up by 1,000 contacts outside a window, then a template to a new contact fails messaging_limit_reached without a Graph call, and one to a counted contact goes', async () => {
    const reached = keys.cloudReached(stack.deviceId);
    const now = Date.now();
    const counted = Array.from({ length: 1000 }, (_, i) => `1555099${String(i).padStart(4, '0')}`);
    await stack.redis.zadd(reached, ...counted.flatMap((waId) => [now, waId]));
    const template = {
      name: 'order_update',
      language: 'en_US',
      components: [{ type: 'body', parameters: [{ type: 'text', text: '#1' }] }],
    };
    const res = await stack.api<{ messageIds: string[] }>('POST', '/send', {
      to: [contact(), counted[0]!],
      template,
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    const [fresh, again] = res.body.messageIds;
    expect(await settled(fresh!)).to.include({ status: 'failed', error: 'messaging_limit_reached' });
    expect(sentWith(fresh!)).to.deep.equal([]);
    expect((await settled(again!)).status).to.equal('sent');
    await stack.redis.del(reached);
  });

  it('When the simulator answers 131047 (its window closed though ours was kept open), then the message fails window_closed at once', async () => {
    const to = contact();
    await devices.keepWindow(stack.deviceId, to, Date.now());
    const id = await send({ to, text: 'only our window is open' });
    expect(await settled(id)).to.include({ status: 'failed', error: 'window_closed' });
    expect(sentWith(id)).to.deep.equal([]);
  });

  it('When the simulator answers 131056 to a third message to one contact, then it is retried and fails pair_rate_limited once its attempts are spent', async () => {
    const to = contact();
    await openWindow(to);
    const ids = [await send({ to, text: 'one' }), await send({ to, text: 'two' })];
    for (const id of ids) expect((await settled(id)).status).to.equal('sent');
    const third = await send({ to, text: 'three' });
    expect(await settled(third)).to.include({ status: 'failed', error: 'pair_rate_limited' });
    const queue = sendQueue();
    const job = await queue.getJob(third);
    await queue.done();
    expect(job?.attemptsMade, 'every attempt was made').to.be.greaterThan(1);
    expect(sentWith(third)).to.deep.equal([]);
  });

  it('When the number allows 2 messages a second but the device is configured for more, then 130429 is retried and every message still goes', async () => {
    cloud.updateNumber(number.id, { throughputPerSecond: 2 });
    const to = [contact(), contact(), contact(), contact()];
    for (const phone of to) await openWindow(phone);
    await send({ to, text: 'burst' });
    let got: SentMessage[] = [];
    await waitFor(() => (got = cloud.sent(number.id).filter((m) => to.includes(m.waId))).length === 4, {
      timeoutMs: 60_000,
      what: 'four messages through 130429 retries',
    });
    cloud.updateNumber(number.id, { throughputPerSecond: 80 });
    const queue = sendQueue();
    const jobs = await Promise.all(got.map((m) => queue.getJob(String(m.request.biz_opaque_callback_data))));
    await queue.done();
    expect(
      jobs.map((j) => j?.attemptsMade ?? 0).some((n) => n > 1),
      'some were refused and retried',
    ).to.equal(true);
  });

  /** Announces the device's new configuration and waits for its holder to read it. */
  async function reconfigure(throughputPerSecond: number): Promise<void> {
    await configure(throughputPerSecond);
    const read = `"throughputPerSecond":${throughputPerSecond}`;
    const seen = () => stack.senders().flatMap((s) => s.output.filter((l) => l.includes(read))).length;
    const before = seen();
    await stack.redis.publish(keys.devicesChannel(), stack.deviceId);
    await waitFor(() => seen() > before, { what: `the sender reading ${throughputPerSecond} a second` });
  }

  it('When the device is configured for 3 messages a second, then a list of 12 reaches the simulator no faster: its n-th message no sooner than (n ÷ 3) seconds after the request', async () => {
    await reconfigure(3);
    const to = Array.from({ length: 12 }, () => contact());
    for (const phone of to) await openWindow(phone);
    // The simulator runs in this process: its arrival times and this clock are one clock.
    const posted = Date.now();
    await send({ to, text: 'paced' });
    let got: SentMessage[] = [];
    await waitFor(() => (got = cloud.sent(number.id).filter((m) => to.includes(m.waId))).length === 12, {
      timeoutMs: 60_000,
      what: 'twelve paced messages',
    });
    // The bucket lets a send go only when fewer than 3 went in the second before it, so the n-th
    // send (from 0) leaves at least floor(n / 3) s after the first, which left after the request;
    // each arrives after it leaves. So the n-th arrival is at least floor(n / 3) s after the
    // request, however late a loaded machine delivers any of them (a delay only adds to it),
    // while a burst would land them all within the first second. The strict per-second spacing of
    // the sends themselves is cloud-limits.test.ts's, on the bucket's own clock: arrivals here
    // carry each request's transit, which a busy machine stretches by more than the bucket's
    // arrival margin.
    const times = got.map((m) => m.at).sort((a, b) => a - b);
    times.forEach((at, n) => expect(at - posted, `arrival ${n}`).to.be.at.least(Math.floor(n / 3) * 1000));
    await reconfigure(80);
  });

  it('When the sender dies after its request reached the Graph API, then the sender that takes over does not send it again and it fails send_outcome_unknown', async () => {
    const to = contact();
    await openWindow(to);
    const marker = `crash-probe-${Date.now()}`;
    const reached = proxy.blackholeAfter(marker);
    const id = await send({ to, text: marker });
    await reached;
    await waitFor(() => sentWith(id).length === 1, { what: 'the request recorded at the simulator' });
    const [dying] = stack.senders();
    dying!.child.kill('SIGKILL');
    await dying!.exited;
    proxy.set('pass');
    await stack.startService('sender');
    const rec = await settled(id);
    expect(rec).to.include({ status: 'failed', error: 'send_outcome_unknown' });
    expect(sentWith(id)).to.have.length(1);
  });

  it('When the token expires (190), then the device turns disconnected cloud_token_expired and its messages are held, not failed', async () => {
    const to = [contact(), contact(), contact()];
    for (const phone of to) await openWindow(phone);
    cloud.expireToken(number.accessToken);
    await send({ to, text: 'after the token expired' });
    await waitFor(async () => (await devices.state(stack.deviceId))?.status === 'disconnected', {
      timeoutMs: 60_000,
      what: 'the device disconnected',
    });
    expect(await devices.state(stack.deviceId)).to.include({ reason: 'cloud_token_expired' });
    const queue = sendQueue();
    const ids = (await queue.getJobs(['delayed', 'waiting', 'active'])).map((j) => j.id!);
    await queue.done();
    expect(ids).to.have.length(3);
    for (const id of ids)
      await waitFor(async () => (await record(id)).held?.reason === 'device_disconnected', {
        timeoutMs: 30_000,
        what: `message ${id} held`,
      });
    for (const id of ids) expect((await record(id)).status).to.equal('queued');
    expect(cloud.sent(number.id).filter((m) => to.includes(m.waId))).to.deep.equal([]);
  });

  it('When the configuration is forgotten (/disconnect) and announced, then the device is dropped like a logged-out one: off the linked set, its held messages failed logged_out', async () => {
    const queue = sendQueue();
    const held = (await queue.getJobs(['delayed', 'waiting'])).map((j) => j.id!);
    await queue.done();
    expect(held, 'the messages the expired token held').to.have.length(3);
    await devices.forget(stack.deviceId);
    await stack.redis.publish(keys.devicesChannel(), stack.deviceId);
    await waitFor(async () => (await stack.redis.sismember(keys.linkedDevices(), stack.deviceId)) === 0, {
      what: 'the device off the linked set',
    });
    for (const id of held)
      await waitFor(async () => (await record(id)).status === 'failed', { what: `message ${id} ended` });
    for (const id of held) expect((await record(id)).error).to.equal('logged_out');
  });
});
