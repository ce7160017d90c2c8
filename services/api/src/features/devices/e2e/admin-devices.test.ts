import { expect } from 'chai';
import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { closeRedis, createRedis } from '@mgw/common';
import {
  BULL_PREFIX,
  CONNECTION_QUEUE,
  keys,
  type ConnectionReply,
  type ConnectionRequest,
  type SendJobData,
} from '@mgw/contracts';
import { SessionStore } from '@mgw/store';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  type TestApi,
} from '../../../../test/helpers/api.js';
import { announceConnectionService } from '../../../../test/helpers/connection-service.js';
import { adminCall, startAdminApi } from '../../../../test/helpers/admin.js';

const RAW_QR = 'https://wa.me/settings/linked_devices#ref,noise,identity,adv,platform';

describe('Admin API: devices and their messages', () => {
  let t: TestApi;
  const linked = freshDeviceId();
  const pairing = freshDeviceId();
  const idle = freshDeviceId();

  before(async () => {
    t = await startAdminApi();
    // A linked device that is connected, one pairing (session `connecting`), one logged out.
    await markConnected(t.redis, linked);
    await t.redis.sadd(keys.linkedDevices(), linked);
    await t.redis.hset(keys.deviceQueue(linked), { messages: 0, bytes: 0 });
    await new SessionStore(t.redis).update(pairing, 'connecting');
    await new SessionStore(t.redis).markDisconnected(idle, 'logged_out');
  });
  after(async () => {
    await t.redis.srem(keys.linkedDevices(), linked);
    await t.close();
  });

  it('When devices are listed, then the linked set and every session record appear, with status, account and queue', async () => {
    const token = await createToken(t, { deviceId: linked });
    const sent = await call(`${t.api}/send`, {
      token,
      json: { to: ['15550001001', '15550001002'], text: 'hi' },
    });
    expect(sent.status).to.equal(202);

    const res = await adminCall(t, '/devices');
    expect(res.status).to.equal(200);
    const devices = res.body.devices as Record<string, unknown>[];
    const byId = new Map(devices.map((d) => [d.deviceId, d]));
    expect(byId.get(linked)).to.deep.include({
      status: 'connected',
      linked: true,
      phone: '15550001111',
      name: 'Test Account',
      profilePic: 'https://example.test/pic.jpg',
      queued: 2,
    });
    expect(byId.get(pairing)).to.include({ status: 'connecting', linked: false, queued: 0 });
    expect(byId.get(idle)).to.include({ status: 'disconnected', lastDisconnectReason: 'logged_out' });
    expect(byId.get(idle)).not.to.have.property('phone');
  });

  it('When a device is pairing by QR, then its view holds the raw QR and the same QR as a PNG', async () => {
    await t.redis.hset(keys.pairing(pairing), {
      pairingId: 'p1',
      owner: 'connection-1',
      method: 'qrCode',
      phone: '',
      state: 'showing',
      startedAt: String(Date.now()),
      qr: RAW_QR,
    });
    const res = await adminCall(t, `/devices/${pairing}`);
    expect(res.status).to.equal(200);
    expect(res.body.device).to.include({ deviceId: pairing, status: 'connecting' });
    const view = res.body.pairing as Record<string, string>;
    expect(view).to.include({ state: 'showing', method: 'qrCode', qr: RAW_QR });
    expect(view.qrImage).to.match(/^data:image\/png;base64,iVBORw0KGgo/);
    const bad = await adminCall(t, '/devices/Not_A_Slug!');
    expect(bad.status).to.equal(400);
  });

  it('When a link is asked for, then the connection service gets the public connect request and the QR comes raw and as a PNG', async () => {
    const withdraw = await announceConnectionService(t.redis);
    const connection: Redis = createRedis(t.config.redis.url, 'worker', 'admin-test-connection');
    const seen: ConnectionRequest[] = [];
    const worker = new Worker<ConnectionRequest, ConnectionReply>(
      CONNECTION_QUEUE,
      async (job) => {
        seen.push(job.data);
        return { success: true, status: 'connecting', qrCode: RAW_QR };
      },
      { connection, prefix: BULL_PREFIX },
    );
    try {
      const deviceId = freshDeviceId();
      const res = await adminCall(t, `/devices/${deviceId}/connect`, { json: { method: 'qrCode' } });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ success: true, status: 'connecting', qr: RAW_QR });
      expect(res.body.qrImage).to.match(/^data:image\/png;base64,/);
      expect(seen[0]).to.include({
        action: 'connect',
        deviceId,
        method: 'qrCode',
        rawQrCode: true,
        forceNew: false,
      });
      const listed = (await adminCall(t, '/devices')).body.devices as { deviceId: string }[];
      expect(
        listed.map((d) => d.deviceId),
        'a device being linked is listed at once',
      ).to.include(deviceId);

      const noPhone = await adminCall(t, `/devices/${deviceId}/connect`, { json: { method: 'pairingCode' } });
      expect(noPhone.status).to.equal(400);
      expect((noPhone.body.details as { path: string[] }[])[0]!.path).to.deep.equal(['phoneNumber']);
    } finally {
      await worker.close();
      await closeRedis(connection);
      await withdraw();
    }
  });

  it('When recent messages are read, then each has its status and a batch shows its progress', async () => {
    const deviceId = freshDeviceId();
    await markConnected(t.redis, deviceId);
    const token = await createToken(t, { deviceId });
    const list = await call(`${t.api}/send`, {
      token,
      json: { to: ['15550002001', '15550002002', '15550002003'], text: 'batch' },
    });
    const single = await call(`${t.api}/send`, { token, json: { to: '15550002004', text: 'one' } });
    const [first] = list.body.messageIds as string[];
    const job = await t.services.acceptor.queue(deviceId).getJob(first!);
    await t.services.messages.markSent(job!.data as SendJobData, new Date());

    const res = await adminCall(t, `/devices/${deviceId}/messages?limit=10`);
    expect(res.status).to.equal(200);
    const messages = res.body.messages as {
      messageId: string;
      status: string;
      to: string;
      createdAt: string;
    }[];
    expect(messages).to.have.length(4);
    expect(messages[0]!.messageId, 'newest first').to.equal(single.body.messageId);
    expect(messages.find((m) => m.messageId === first)?.status).to.equal('sent');
    expect(res.body.batches).to.deep.equal([
      {
        batchId: list.body.messageId,
        counts: { scheduled: 0, queued: 2, sent: 1, delivered: 0, read: 0, failed: 0, deleted: 0, held: 0 },
        total: 3,
      },
    ]);
    const one = await adminCall(t, `/devices/${deviceId}/messages/${first}`);
    expect(one.body.message).to.include({ messageId: first, status: 'sent', batchId: list.body.messageId });
    const other = await adminCall(t, `/devices/${linked}/messages/${first}`);
    expect(other.status, "another device's message").to.equal(404);
    expect((await adminCall(t, `/devices/${deviceId}/messages?limit=0`)).status).to.equal(400);
  });

  it('When sent texts are read, then each shows what its recipient got (personalised, a caption, a long one cut at 1,000) — the admin API only, not the public GET /messages/:id', async () => {
    const deviceId = freshDeviceId();
    await markConnected(t.redis, deviceId);
    const token = await createToken(t, { deviceId });
    const list = await call(`${t.api}/send`, {
      token,
      json: {
        to: [
          { phone: '15550003001', vars: { name: 'Ana' } },
          { phone: '15550003002', vars: { name: 'Omar' } },
        ],
        text: 'Hello {{name}}, your order is ready',
      },
    });
    expect(list.status).to.equal(202);
    const long = 'x'.repeat(1500);
    const longOne = await call(`${t.api}/send`, { token, json: { to: '15550003003', text: long } });
    const media = await call(`${t.api}/send`, {
      token,
      json: {
        to: '15550003004',
        attachment: {
          type: 'document',
          base64: Buffer.from('%PDF-1.4 menu').toString('base64'),
          filename: 'menu.pdf',
          caption: 'Menu of the day',
        },
      },
    });
    expect(media.status).to.equal(202);
    // Sent (settled): the request's content has released its bytes; the text stays for the records.
    const ids = [...(list.body.messageIds as string[]), longOne.body.messageId, media.body.messageId];
    for (const id of ids) {
      const job = await t.services.acceptor.queue(deviceId).getJob(String(id));
      await t.services.messages.markSent(job!.data as SendJobData, new Date());
    }

    const res = await adminCall(t, `/devices/${deviceId}/messages?limit=10`);
    expect(res.status).to.equal(200);
    const byId = new Map(
      (res.body.messages as Record<string, unknown>[]).map((m) => [m.messageId as string, m]),
    );
    const [ana, omar] = list.body.messageIds as string[];
    expect(byId.get(ana!)).to.include({ status: 'sent', text: 'Hello Ana, your order is ready' });
    expect(byId.get(omar!)).to.include({ text: 'Hello Omar, your order is ready' });
    expect(byId.get(longOne.body.messageId as string)).to.include({
      text: 'x'.repeat(1000),
      textTruncated: true,
    });
    expect(byId.get(media.body.messageId as string)?.attachment).to.deep.equal({
      type: 'document',
      fileName: 'menu.pdf',
      caption: 'Menu of the day',
    });
    const one = await adminCall(t, `/devices/${deviceId}/messages/${ana}`);
    expect(one.body.message).to.include({ text: 'Hello Ana, your order is ready' });

    // The public record keeps the spec's shape: no text.
    const pub = await call(`${t.api}/messages/${ana}`, { token });
    expect(pub.status).to.equal(200);
    expect(pub.body.data).to.not.have.property('text');
    expect(JSON.stringify(pub.body)).to.not.include('your order is ready');
  });

  it('When contacts wrote to the device, then the recent messages list them with the sent ones, newest first, with their text; ?direction= shows one side', async () => {
    const deviceId = freshDeviceId();
    await markConnected(t.redis, deviceId);
    const token = await createToken(t, { deviceId });
    const sent = await call(`${t.api}/send`, { token, json: { to: '15550004001', text: 'we are open' } });
    const receivedAt = new Date(Date.now() + 1000);
    const inboundId = await t.services.inbound.record(deviceId, {
      platformMessageId: `IN${Date.now()}`,
      from: '15550004001',
      contact: { phone: '15550004001' },
      text: 'are you open on sunday?',
      receivedAt,
    });
    expect(inboundId).to.be.a('string');

    const all = await adminCall(t, `/devices/${deviceId}/messages?limit=10`);
    expect(all.status).to.equal(200);
    const listed = all.body.messages as Record<string, unknown>[];
    expect(listed.map((m) => [m.messageId, m.direction])).to.deep.equal([
      [inboundId, 'inbound'],
      [sent.body.messageId, 'outbound'],
    ]);
    expect(listed[0]).to.include({
      status: 'received',
      from: '15550004001',
      text: 'are you open on sunday?',
    });
    expect(listed[1]).to.include({ status: 'queued', text: 'we are open' });

    const inbound = await adminCall(t, `/devices/${deviceId}/messages?direction=inbound`);
    expect((inbound.body.messages as { messageId: string }[]).map((m) => m.messageId)).to.deep.equal([
      inboundId,
    ]);
    const outbound = await adminCall(t, `/devices/${deviceId}/messages?direction=outbound`);
    expect((outbound.body.messages as { messageId: string }[]).map((m) => m.messageId)).to.deep.equal([
      sent.body.messageId,
    ]);
    const bad = await adminCall(t, `/devices/${deviceId}/messages?direction=sideways`);
    expect(bad.status).to.equal(400);
    expect(JSON.stringify(bad.body.details)).to.include('direction');
  });

  it('When the gateway is not in sandbox mode, then GET /sandbox says so; in sandbox mode it gives the simulator’s phone-link URL', async () => {
    const res = await adminCall(t, '/sandbox');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ success: true, sandbox: null });
    const sandboxed = await startAdminApi({
      admin: {
        password: 'correct horse battery staple',
        apiToken: 'admin-automation-token-0123456789abcdef',
        sessionTtlSeconds: 3600,
        signInLimit: 1000,
        signInWindowMs: 60_000,
        sandboxUrl: 'http://127.0.0.1:3100',
      },
    });
    try {
      const there = await adminCall(sandboxed, '/sandbox');
      expect(there.body).to.deep.equal({
        success: true,
        sandbox: { phoneLinkUrl: 'http://127.0.0.1:3100/phone/link' },
      });
      expect((await call(`${sandboxed.url}/api/admin/v1/sandbox`)).status, 'admins only').to.equal(401);
    } finally {
      await sandboxed.close();
    }
  });
});
