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
import { call, createToken, freshDeviceId, markConnected, type TestApi } from '../helpers/api.js';
import { announceConnectionService } from '../helpers/connection-service.js';
import { adminCall, startAdminApi } from '../helpers/admin.js';

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
});
