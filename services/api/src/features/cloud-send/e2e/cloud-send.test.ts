import { expect } from 'chai';
import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { closeRedis, cloudConfig, createRedis } from '@mgw/common';
import { sampleTemplates, startCloudSim, type CloudSimHandle } from '@mgw/cloud-sim';
import { BULL_PREFIX, keys, sendQueueName, type SendJobData, type SendJobResult } from '@mgw/contracts';
import { CloudDeviceStore, ContentStore, Encryption } from '@mgw/store';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
} from '../../../../test/helpers/api.js';

/**
 * The Cloud API's rules at accept time through the real API and Redis, with the Cloud API
 * simulator (libs/cloud-sim) as the Graph API: templates on cloud devices only, checked against
 * the number's WABA; the 24-hour window of free-form messages; /otp's authentication template.
 * The devices are configured with CloudDeviceStore directly (the configuration routes are tested
 * with themselves); sending is the sender's, so what is asserted is what was accepted and stored.
 */
describe('POST /send and /otp on Cloud API devices (real Redis, the Cloud API simulator)', () => {
  let sim: CloudSimHandle;
  let t: TestApi;
  let cloud: CloudDeviceStore;
  let deviceId: string;
  let token: string;
  /** Each test's own number and WABA: the templates kept for one never answer for another. */
  let n = 0;
  let wabaId: string;

  before(async () => {
    sim = await startCloudSim();
    t = await startApi({
      otpWaitTimeoutMs: 5000,
      cloud: cloudConfig({
        CLOUD_GRAPH_URL: sim.url,
        CLOUD_GRAPH_TIMEOUT_MS: 5000,
        ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
      }),
    });
    cloud = new CloudDeviceStore(t.redis, Encryption.fromEnv());
  });
  beforeEach(async () => {
    n++;
    const phoneNumberId = `${Date.now()}${n}`;
    wabaId = `9${phoneNumberId}`;
    const accessToken = `token-${phoneNumberId}`;
    sim.addNumber({
      id: phoneNumberId,
      wabaId,
      displayPhoneNumber: '+1 555-010-0001',
      verifiedName: 'Shop',
      accessToken,
      appSecret: 'app-secret',
    });
    // verification_code (AUTHENTICATION, en_US) and order_update (UTILITY, en_US, one parameter).
    for (const template of sampleTemplates(wabaId)) sim.addTemplate(template);
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    await markConnected(t.redis, deviceId);
    await cloud.set(deviceId, {
      phoneNumberId,
      wabaId,
      accessToken,
      appSecret: 'app-secret',
      verifyToken: 'verify',
    });
  });
  afterEach(async () => {
    await t.services.acceptor.queue(deviceId).obliterate({ force: true });
  });
  after(async () => {
    await t.close();
    await sim.close();
  });

  const send = (json: unknown, as = token) => call(`${t.api}/send`, { token: as, json });
  const job = async (id: string) =>
    (await t.services.acceptor.queue(deviceId).getJob(id)) as Job<SendJobData>;
  const contentOf = async (j: Job<SendJobData>) =>
    (await new ContentStore(t.redis, Encryption.fromEnv(), 60).get(j.data.deviceId, j.data.contentId))
      ?.content;
  const orderUpdate = (...values: string[]) => ({
    name: 'order_update',
    language: 'en_US',
    components: [{ type: 'body', parameters: values.map((text) => ({ type: 'text', text })) }],
  });
  /** The contact wrote to the number `agoMs` ago (what the webhook's messages keep). */
  const wrote = (contact: string, agoMs: number) =>
    t.redis.zadd(keys.cloudWindows(deviceId), Date.now() - agoMs, contact);

  it("When an approved template of the number's WABA is sent with its parameters, then 202, its content stored as given and its record shows it, whatever the window", async () => {
    const template = orderUpdate('#1234');
    const res = await send({ to: '15550001111', template });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    const j = await job(res.body.messageId as string);
    expect(await contentOf(j)).to.deep.equal({ template });
    const record = await call(`${t.api}/messages/${j.data.messageId}`, { token });
    expect(record.status).to.equal(200);
    expect((record.body.data as Record<string, unknown>).template).to.deep.equal(template);
  });

  it('When the template is missing, in another language, or paused, then 422 names it and why, and nothing is queued', async () => {
    const missing = await send({ to: '15550001111', template: { name: 'no_such', language: 'en_US' } });
    expect(missing.status).to.equal(422);
    expect(missing.body).to.deep.equal({
      success: false,
      error: 'Template not found',
      details: [
        {
          path: ['template'],
          message: 'No template "no_such" (en_US) in the number\'s WhatsApp Business Account',
          reason: 'template_not_found',
        },
      ],
    });
    const wrongLanguage = await send({
      to: '15550001111',
      template: { ...orderUpdate('#1'), language: 'ar' },
    });
    expect(wrongLanguage.status).to.equal(422);
    expect((wrongLanguage.body.details as { message: string }[])[0]!.message).to.equal(
      'No template "order_update" (ar) in the number\'s WhatsApp Business Account: it exists in en_US',
    );
    sim.setTemplateStatus(wabaId, 'order_update', 'en_US', 'PAUSED');
    // The kept list is the API's for 10 minutes: a paused template is seen on the next read.
    await t.redis.del(keys.cloudTemplates(deviceId));
    const paused = await send({ to: '15550001111', template: orderUpdate('#1') });
    expect(paused.status).to.equal(422);
    expect(paused.body).to.deep.include({ error: 'Template not approved' });
    expect((paused.body.details as { reason: string }[])[0]!.reason).to.equal('template_paused');
    expect(await t.services.acceptor.queue(deviceId).count()).to.equal(0);
  });

  it('When a template was added to the WABA after the list was kept, then it is found once the refresh floor (30 s) since the last read has passed', async () => {
    expect((await send({ to: '15550001111', template: orderUpdate('#1') })).status).to.equal(202);
    sim.addTemplate({
      wabaId,
      name: 'shipping_note',
      language: 'en_US',
      category: 'UTILITY',
      components: [{ type: 'BODY', text: 'Shipped today.' }],
    });
    const shippingNote = { to: '15550001111', template: { name: 'shipping_note', language: 'en_US' } };
    // Within the floor a missing name is not read again: names that do not exist cost no Graph call each.
    expect((await send(shippingNote)).status).to.equal(422);
    // The kept list as if read 31 s ago.
    const key = keys.cloudTemplates(deviceId);
    const kept = JSON.parse((await t.redis.get(key))!) as { fetchedAt: number };
    await t.redis.set(key, JSON.stringify({ ...kept, fetchedAt: kept.fetchedAt - 31_000 }), 'KEEPTTL');
    const res = await send(shippingNote);
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
  });

  it("When the parameters are not as many as the template's placeholders, then 400 names the component", async () => {
    const none = await send({ to: '15550001111', template: { name: 'order_update', language: 'en_US' } });
    expect(none.status).to.equal(400);
    expect(none.body).to.deep.equal({
      success: false,
      error: 'Invalid request data',
      details: [
        {
          path: ['template', 'components'],
          message: 'template order_update (en_US): its body takes 1 parameter, 0 given',
        },
      ],
    });
    const two = await send({ to: '15550001111', template: orderUpdate('#1', '#2') });
    expect(two.status).to.equal(400);
    expect(two.body.details).to.deep.equal([
      {
        path: ['template', 'components', 0, 'parameters'],
        message: 'template order_update (en_US): its body takes 1 parameter, 2 given',
      },
    ]);
  });

  it('When a template goes to a linked device, then 422 says templates are the Cloud API’s and names the route that configures one', async () => {
    const linked = freshDeviceId();
    const linkedToken = await createToken(t, { deviceId: linked });
    await markConnected(t.redis, linked);
    const res = await send({ to: '15550001111', template: orderUpdate('#1') }, linkedToken);
    expect(res.status).to.equal(422);
    expect(res.body.error).to.equal(
      'Templates are sent by Cloud API devices only: configure this device as a Cloud API number (PUT /api/messenger/v1/cloud) or send text',
    );
    // A linked device's text is as it was: no window.
    expect((await send({ to: '15550001111', text: 'hi' }, linkedToken)).status).to.equal(202);
    await t.services.acceptor.queue(linked).obliterate({ force: true });
  });

  it('When a free-form message goes to one contact whose window is closed, then 422 names the template route; inside the window, 202', async () => {
    await wrote('15550002222', 25 * 3600_000);
    for (const to of ['15550001111', '15550002222']) {
      const res = await send({ to, text: 'hello' });
      expect(res.status, to).to.equal(422);
      expect(res.body).to.deep.equal({
        success: false,
        error: "The contact's 24-hour window is closed: send an approved template (`template` in /send)",
        details: [
          {
            path: ['to'],
            message: `${to} has not written to this number in the last 24 hours: only a template may be sent`,
            reason: 'window_closed',
          },
        ],
      });
    }
    await wrote('15550002222', 60_000);
    const open = await send({ to: '15550002222', text: 'hello' });
    expect(open.status, JSON.stringify(open.body)).to.equal(202);
    const location = await send({ to: '15550001111', location: { latitude: 1, longitude: 2 } });
    expect(location.status).to.equal(422);
  });

  it('When a list mixes open and closed windows, then it is accepted whole: each recipient’s message is queued and the sender fails the closed ones one by one', async () => {
    await wrote('15550002222', 60_000);
    const to = ['15550001111', '15550002222', '15550003333'];
    const res = await send({ to, text: 'hello' });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    const ids = res.body.messageIds as string[];
    expect((await Promise.all(ids.map(job))).map((j) => j.data.to)).to.deep.equal(to);
  });

  describe('/otp on a cloud device', () => {
    let workerConnection: Redis;
    let worker: Worker<SendJobData, SendJobResult> | undefined;
    let seen: { job: SendJobData; content: unknown }[];
    before(() => {
      workerConnection = createRedis(t.config.redis.url, 'worker', 'test-sender');
    });
    beforeEach(() => {
      seen = [];
      // A stand-in for the sender (sending is another's): it reads the content as the sender would.
      worker = new Worker<SendJobData, SendJobResult>(
        sendQueueName(deviceId),
        async (j) => {
          seen.push({ job: j.data, content: await contentOf(j) });
          return {
            messageId: j.data.messageId,
            platformMessageId: 'wamid.HBgLMTU1NTAwMDExMTEVAgARGBI',
            phone: j.data.to,
            sentAt: '2026-01-02T03:04:05.000Z',
          };
        },
        { connection: workerConnection, prefix: BULL_PREFIX },
      );
    });
    afterEach(async () => {
      await worker?.close();
      worker = undefined;
    });
    after(async () => closeRedis(workerConnection));

    it("When an OTP goes to a cloud device in English or Arabic, then the device's authentication template is queued with the code as body and copy-code parameter, its record keeping only the template's name", async () => {
      sim.addTemplate({
        wabaId,
        name: 'verification_code',
        language: 'ar',
        category: 'AUTHENTICATION',
        components: [
          { type: 'BODY', text: '*{{1}}* هو رمز التحقق الخاص بك.' },
          { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE', text: 'نسخ الرمز' }] },
        ],
      });
      for (const [language, code] of [
        ['English', '123456'],
        ['Arabic', '0042'],
      ] as const) {
        const res = await call(`${t.api}/otp`, { token, json: { phone: '15550001111', code, language } });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        expect(res.body.data).to.deep.include({
          code,
          language,
          platformMessageId: 'wamid.HBgLMTU1NTAwMDExMTEVAgARGBI',
        });
        const { job: j, content } = seen.at(-1)!;
        expect(j).to.include({ kind: 'otp', to: '15550001111' });
        const parameters = [{ type: 'text', text: code }];
        expect(content).to.deep.equal({
          template: {
            name: 'verification_code',
            language: language === 'English' ? 'en_US' : 'ar',
            components: [
              { type: 'body', parameters },
              { type: 'button', sub_type: 'url', index: 0, parameters },
            ],
          },
          otp: { language },
        });
        // The sender keeps the kind fields on the record as it claims the message: the code stays out.
        await t.services.kinds.keep(deviceId, j.messageId, content as never);
        const kept = await t.services.kinds.read(deviceId, j.messageId);
        expect(kept.template).to.deep.equal({
          name: 'verification_code',
          language: language === 'English' ? 'en_US' : 'ar',
        });
      }
    });

    it('When the WABA has no authentication template in that language, then 422 names it and nothing is queued', async () => {
      const res = await call(`${t.api}/otp`, {
        token,
        json: { phone: '15550001111', code: '1234', language: 'Arabic' },
      });
      expect(res.status).to.equal(422);
      expect(res.body).to.deep.include({ error: 'Template not found' });
      expect((res.body.details as { message: string }[])[0]!.message).to.equal(
        'No template "verification_code" (ar) in the number\'s WhatsApp Business Account: it exists in en_US',
      );
      expect(seen).to.deep.equal([]);
    });
  });
});
