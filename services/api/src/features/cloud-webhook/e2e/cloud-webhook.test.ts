import { createHmac } from 'node:crypto';
import http from 'node:http';
import { expect } from 'chai';
import { startCloudSim, type CloudSimHandle } from '@mgw/cloud-sim';
import {
  CLOUD_WEBHOOK_ERRORS,
  CLOUD_WEBHOOK_MAX_AGE_MS,
  CLOUD_WEBHOOK_MAX_BYTES,
  CLOUD_WEBHOOK_PATH,
  FAILURE_REASONS,
  keys,
  type SendJobData,
} from '@mgw/contracts';
import { queueMessages, waitFor } from '@mgw/testing';
import { call, createToken, freshDeviceId, startApi, type TestApi } from '../../../../test/helpers/api.js';

/**
 * Meta's webhook endpoint against the real app, Redis and the Cloud API simulator: the simulator's
 * app subscribes the endpoint (its GET handshake) and delivers signed statuses and messages as
 * Meta does; the cloud devices are configured by writing CloudDeviceStore (as the configuration
 * routes do), and the outbound records by the store's own writers (as the sender does).
 */
describe('Cloud API webhook (GET|POST /api/cloud/v1/webhook)', function () {
  this.timeout(60_000);
  let t: TestApi;
  let sim: CloudSimHandle;
  let deviceId: string;
  let otherDeviceId: string;
  // The install's number index is shared by the suite's Redis: ids of this run only.
  const run = `${process.pid}${Date.now() % 1_000_000}`;
  const number = { id: `7${run}1`, wabaId: `6${run}`, appId: `app-${run}`, secret: `app-secret-${run}` };
  const other = {
    id: `7${run}2`,
    wabaId: `5${run}`,
    appId: `app-other-${run}`,
    secret: `other-secret-${run}`,
  };
  const verifyToken = `verify-${run}`;
  const USER = '15550102000';

  const hook = (path = CLOUD_WEBHOOK_PATH) => `${t.url}${path}`;
  const sign = (body: string, secret: string) =>
    `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  const post = (body: string, signature?: string, path?: string) =>
    call(hook(path), {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        ...(signature ? { 'x-hub-signature-256': signature } : {}),
      },
    });
  const envelope = (phoneNumberId: string, value: Record<string, unknown>) =>
    JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: number.wabaId,
          changes: [
            {
              field: 'messages',
              value: {
                messaging_product: 'whatsapp',
                metadata: { phone_number_id: phoneNumberId },
                ...value,
              },
            },
          ],
        },
      ],
    });
  const textFrom = (wamid: string, atMs: number) => ({
    contacts: [{ profile: { name: 'Ann' }, wa_id: USER }],
    messages: [
      {
        from: USER,
        id: wamid,
        timestamp: String(Math.floor(atMs / 1000)),
        type: 'text',
        text: { body: 'hi' },
      },
    ],
  });
  const events = async (device = deviceId) =>
    (await t.services.eventLog.read(device, { limit: 500 })).events.map((e) => ({
      type: e.type,
      data: e.data as Record<string, unknown>,
    }));
  const deliveries = async (outcome: string) =>
    (await t.services.metrics.cloudWebhookDeliveries.get()).values.find((v) => v.labels.outcome === outcome)
      ?.value ?? 0;
  /** A request for exactly this path (fetch would resolve its dot segments before sending it). */
  const exactly = (method: string, path: string, body?: string, signature?: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const url = new URL(t.url);
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          method,
          path,
          headers: {
            ...(body ? { 'content-type': 'application/json' } : {}),
            ...(signature ? { 'x-hub-signature-256': signature } : {}),
          },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, text }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  /** Sends through the simulator's Graph API as the engine does, with our messageId as callback data. */
  const graphSend = async (messageId: string) => {
    const res = await fetch(`${sim.url}/v21.0/${number.id}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer token-${run}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        messaging_product: 'whatsapp',
        to: USER,
        type: 'template',
        template: { name: 'order_update', language: { code: 'en_US' } },
        biz_opaque_callback_data: messageId,
      }),
    });
    expect(res.status).to.equal(200);
    return ((await res.json()) as { messages: { id: string }[] }).messages[0]!.id;
  };
  /** A message of the device as the sender leaves it: queued with its job, claimed, maybe sent. */
  const outbound = async (device = deviceId, sent = true): Promise<SendJobData> => {
    const { jobs, queue } = await queueMessages({ redis: t.redis, deviceId: device, to: [USER] });
    await queue.close();
    const job = jobs[0]!;
    await t.services.messages.claim(job);
    if (sent) await t.services.messages.markSent(job, new Date());
    return job;
  };

  before(async () => {
    t = await startApi();
    sim = await startCloudSim({
      numbers: [
        {
          id: number.id,
          wabaId: number.wabaId,
          appId: number.appId,
          displayPhoneNumber: '+1 555-010-0001',
          verifiedName: 'Shop',
          accessToken: `token-${run}`,
          appSecret: number.secret,
        },
        {
          id: other.id,
          wabaId: other.wabaId,
          appId: other.appId,
          displayPhoneNumber: '+1 555-010-0002',
          verifiedName: 'Other',
          accessToken: `token-other-${run}`,
          appSecret: other.secret,
        },
      ],
      webhookRetry: { delaysMs: [] },
    });
    deviceId = freshDeviceId();
    otherDeviceId = freshDeviceId();
    const configure = (device: string, n: typeof number, token: string) =>
      t.services.cloudDevices.set(device, {
        phoneNumberId: n.id,
        wabaId: n.wabaId,
        accessToken: token,
        appSecret: n.secret,
        verifyToken,
      });
    await configure(deviceId, number, `token-${run}`);
    await configure(otherDeviceId, other, `token-other-${run}`);
    await sim.subscribe(number.appId, hook(), verifyToken);
    await sim.subscribe(other.appId, hook(), verifyToken);
  });
  after(async () => {
    await sim?.close();
    await t?.services.cloudDevices.forget(deviceId);
    await t?.services.cloudDevices.forget(otherDeviceId);
    await t?.close();
  });

  it('When Meta verifies the endpoint with a cloud device’s token, then the challenge alone comes back as plain text', async () => {
    const res = await fetch(
      `${hook()}?hub.mode=subscribe&hub.verify_token=${verifyToken}&hub.challenge=1158201444`,
    );
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/plain; charset=utf-8');
    expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(await res.text()).to.equal('1158201444');
  });

  it('When the handshake’s token is wrong, or its challenge is markup, then it is 403 JSON and nothing is echoed', async () => {
    for (const query of [
      `hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1`,
      `hub.mode=subscribe&hub.verify_token=${verifyToken}&hub.challenge=%3Cscript%3E`,
      `hub.mode=unsubscribe&hub.verify_token=${verifyToken}&hub.challenge=1`,
      `hub.mode=subscribe&hub.verify_token=${verifyToken}&hub.challenge=1&hub.challenge=2`,
      '',
    ]) {
      const res = await call(`${hook()}?${query}`);
      expect(res.status, query).to.equal(403);
      expect(res.body).to.deep.equal({ success: false, error: CLOUD_WEBHOOK_ERRORS.handshakeRefused });
    }
  });

  it('When a contact writes (the simulator’s user), then message.received is emitted, the message recorded once and the window opened', async () => {
    const { id: wamid } = sim.inbound(number.id, { from: USER, text: 'hello shop', name: 'Ann' });
    await sim.webhooksIdle();
    const delivery = sim.deliveries().find((d) => d.body.includes(wamid))!;
    expect(delivery.attempts).to.deep.equal([200]);
    const received = (await events()).filter((e) => e.type === 'message.received');
    expect(received).to.have.length(1);
    expect(received[0]!.data).to.deep.include({
      deviceId,
      platformMessageId: wamid,
      from: USER,
      text: 'hello shop',
    });
    const messageId = received[0]!.data.messageId as string;
    expect(await t.services.inbound.get(deviceId, messageId)).to.deep.include({
      direction: 'inbound',
      from: USER,
      text: 'hello shop',
      platformMessageId: wamid,
    });
    expect(Number(await t.redis.zscore(keys.cloudWindows(deviceId), USER))).to.be.closeTo(Date.now(), 60_000);
    // The device's API sees it as it sees a linked device's: the record and the pulled event.
    const token = await createToken(t, { deviceId });
    const record = await call(`${t.api}/messages/${messageId}`, { token });
    expect(record.status).to.equal(200);
    expect(record.body.data).to.deep.include({ direction: 'inbound', from: USER, text: 'hello shop' });
    const pulled = await call(`${t.api}/events?types=message.received`, { token });
    expect(
      (pulled.body.data as { events: { data: { messageId: string } }[] }).events.map((e) => e.data.messageId),
    ).to.include(messageId);
    // Meta redelivers: the same message in another body is recorded once.
    const again = envelope(number.id, { ...textFrom(wamid, Date.now()) });
    expect((await post(again, sign(again, number.secret))).status).to.equal(200);
    expect((await events()).filter((e) => e.type === 'message.received')).to.have.length(1);
  });

  it('When a message sent with our messageId as callback data gets its statuses, then the record moves sent → delivered → read with its events', async () => {
    // The engine's answer with the wamid was lost: the record is claimed, not yet sent.
    const job = await outbound(deviceId, false);
    const wamid = await graphSend(job.messageId);
    await sim.webhooksIdle();
    await waitFor(async () => (await t.services.messages.get(deviceId, job.messageId))?.status === 'sent', {
      timeoutMs: 5000,
      what: 'the sent status',
    });
    sim.markStatus(wamid, 'read');
    await sim.webhooksIdle();
    expect(await t.services.messages.get(deviceId, job.messageId)).to.deep.include({ status: 'read' });
    const mine = (await events()).filter((e) => e.data.messageId === job.messageId).map((e) => e.type);
    expect(mine).to.deep.equal(['message.sent', 'message.delivered', 'message.read']);
  });

  it('When a sent message fails at Meta, then the record fails with the reason of its code, once; a read one never does', async () => {
    const job = await outbound();
    const wamid = await graphSend(job.messageId);
    sim.markStatus(wamid, 'failed', { code: 131026, title: 'Message undeliverable' });
    await sim.webhooksIdle();
    expect(await t.services.messages.get(deviceId, job.messageId)).to.deep.include({
      status: 'failed',
      error: FAILURE_REASONS.undeliverable,
    });
    const failed = (await events()).filter(
      (e) => e.type === 'message.failed' && e.data.messageId === job.messageId,
    );
    expect(failed).to.have.length(1);
    // A read message: a late failure naming it changes nothing.
    const read = await outbound();
    await t.services.messages.markReceipt(deviceId, read.messageId, 'read');
    const body = envelope(number.id, {
      statuses: [
        {
          id: 'wamid.late',
          status: 'failed',
          timestamp: String(Math.floor(Date.now() / 1000)),
          recipient_id: USER,
          biz_opaque_callback_data: read.messageId,
          errors: [{ code: 131047, title: 'Re-engagement message' }],
        },
      ],
    });
    expect((await post(body, sign(body, number.secret))).status).to.equal(200);
    expect(await t.services.messages.get(deviceId, read.messageId)).to.deep.include({ status: 'read' });
  });

  it('When a status names another device’s message, then that record does not move', async () => {
    const theirs = await outbound(otherDeviceId);
    const body = envelope(number.id, {
      statuses: [
        {
          id: 'wamid.x',
          status: 'read',
          timestamp: String(Math.floor(Date.now() / 1000)),
          recipient_id: USER,
          biz_opaque_callback_data: theirs.messageId,
        },
      ],
    });
    expect((await post(body, sign(body, number.secret))).body).to.deep.equal({ success: true });
    expect(await t.services.messages.get(otherDeviceId, theirs.messageId)).to.deep.include({
      status: 'sent',
    });
  });

  it('When the signature is forged, another app’s, or missing, then it is 401 and nothing is recorded', async () => {
    const body = envelope(number.id, textFrom('wamid.forged', Date.now()));
    const before = await deliveries('bad_signature');
    for (const signature of [
      sign(body, other.secret),
      sign(body, 'guess'),
      `sha256=${'0'.repeat(64)}`,
      'sha1=abc',
      undefined,
    ]) {
      const res = await post(body, signature);
      expect(res.status, String(signature)).to.equal(401);
      expect(res.body).to.deep.equal({ success: false, error: CLOUD_WEBHOOK_ERRORS.badSignature });
    }
    // A body naming both apps' numbers passes with neither secret alone.
    const both = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        ...(JSON.parse(body) as { entry: unknown[] }).entry,
        ...(JSON.parse(envelope(other.id, textFrom('wamid.forged2', Date.now()))) as { entry: unknown[] })
          .entry,
      ],
    });
    expect((await post(both, sign(both, number.secret))).status).to.equal(401);
    expect((await post(both, sign(both, other.secret))).status).to.equal(401);
    expect(await deliveries('bad_signature')).to.equal(before + 7);
    const platformIds = (await events()).map((e) => e.data.platformMessageId);
    expect(platformIds).not.to.include('wamid.forged');
  });

  it('When a delivery is replayed, or its events are older than a day, then it is answered 200 and changes nothing', async () => {
    const fresh = envelope(number.id, textFrom('wamid.replayed', Date.now()));
    expect((await post(fresh, sign(fresh, number.secret))).status).to.equal(200);
    await t.redis.del(keys.inboundByPlatformId(deviceId, 'wamid.replayed'));
    const replays = await deliveries('replay');
    expect((await post(fresh, sign(fresh, number.secret))).body).to.deep.equal({ success: true });
    expect(await deliveries('replay')).to.equal(replays + 1);
    expect((await events()).filter((e) => e.data.platformMessageId === 'wamid.replayed')).to.have.length(1);
    const old = envelope(number.id, textFrom('wamid.old', Date.now() - CLOUD_WEBHOOK_MAX_AGE_MS - 60_000));
    const stale = await deliveries('stale');
    expect((await post(old, sign(old, number.secret))).status).to.equal(200);
    expect(await deliveries('stale')).to.equal(stale + 1);
    expect((await events()).map((e) => e.data.platformMessageId)).not.to.include('wamid.old');
  });

  it('When a delivery names a number no cloud device is, then it is answered 200, dropped and counted', async () => {
    const before = await deliveries('unknown_number');
    const body = envelope('999000111', textFrom('wamid.nobody', Date.now()));
    expect((await post(body, sign(body, number.secret))).status).to.equal(200);
    expect(await deliveries('unknown_number')).to.equal(before + 1);
  });

  it('When the body is hostile (not JSON, not Meta’s, nested deep, empty, not JSON-labelled) or oversized, then it is refused in the envelope', async () => {
    for (const body of ['{"object":', '[]', '{"object":"page"}', '['.repeat(200_000), '\u0000']) {
      const res = await post(body, sign(body, number.secret));
      expect(res.status, body.slice(0, 12)).to.equal(400);
      expect(res.body).to.deep.equal({ success: false, error: CLOUD_WEBHOOK_ERRORS.malformed });
    }
    const empty = await call(hook(), {
      method: 'POST',
      body: '',
      headers: { 'content-type': 'application/json' },
    });
    expect(empty.status).to.equal(400);
    const unlabelled = await call(hook(), { method: 'POST', body: '{}' });
    expect(unlabelled.status).to.equal(400);
    const huge = `{"object":"whatsapp_business_account","pad":"${'x'.repeat(CLOUD_WEBHOOK_MAX_BYTES)}"}`;
    const tooLarge = await post(huge, sign(huge, number.secret));
    expect(tooLarge.status).to.equal(413);
    expect(tooLarge.body).to.deep.equal({ success: false, error: CLOUD_WEBHOOK_ERRORS.tooLarge });
  });

  it('When the path is spelled otherwise (letter case, a trailing or doubled slash, an escape), then it is 404 and nothing is read', async () => {
    const body = envelope(number.id, textFrom('wamid.spelled', Date.now()));
    const signature = sign(body, number.secret);
    for (const path of [
      '/API/cloud/v1/webhook',
      '/api/Cloud/v1/webhook',
      '/api/cloud/V1/webhook',
      '/api/cloud/v1/Webhook',
      '/api/cloud/v1/WEBHOOK',
      '/api/cloud/v1/webhook/',
      '/api/cloud/v1//webhook',
      '//api/cloud/v1/webhook',
      '/api/cloud/v1/%77ebhook',
      '/api/cloud/v1/x/../webhook',
      '/api/cloud/v1/webhook;v=1',
    ]) {
      const posted = await exactly('POST', path, body, signature);
      expect(posted.status, `POST ${path}`).to.equal(404);
      expect(JSON.parse(posted.text)).to.deep.equal({ success: false, error: 'Not found' });
      const handshake = await exactly(
        'GET',
        `${path}?hub.mode=subscribe&hub.verify_token=${verifyToken}&hub.challenge=42`,
      );
      expect(handshake.status, `GET ${path}`).to.equal(404);
    }
    expect((await events()).map((e) => e.data.platformMessageId)).not.to.include('wamid.spelled');
    // Under the token-authenticated API it is no route: the token check answers first.
    const underApi = await fetch(`${t.api}/cloud/v1/webhook`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    expect(underApi.status).to.equal(401);
  });

  it('When another method is used, then it is 405 naming GET, HEAD and POST, with no token asked', async () => {
    const res = await call(hook(), {
      method: 'PUT',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).to.equal(405);
    expect(res.headers.get('allow')).to.equal('GET, HEAD, POST');
  });
});
