import { expect } from 'chai';
import { keys, type MessageRecord } from '@mgw/contracts';
import type { DeviceHealth, InboundRecord, SendingView } from '@mgw/store';
import { MemoryRedis, inboundRecord, sentRecord } from '../test-support.js';
import { DeviceDirectory } from './device-directory.js';
import {
  deviceMessage,
  deviceMessages,
  devicesDeps,
  listDevices,
  showDevice,
  type DevicesDeps,
} from './devices.js';
import { SHOWN_TEXT_CHARS, messageViews } from './message-view.js';
import { batchCounts, recentMessages } from './recent-messages.js';

/**
 * The admin Devices and Messages pages' reads without an API: the session and pairing records in an
 * in-memory Redis (as the connection service and the senders write them), the message stores and
 * the send queue faked.
 */
describe('Devices: the directory, a device with its standing, its recent messages and their views (in-memory Redis)', () => {
  let redis: MemoryRedis;
  let records: Map<string, MessageRecord | InboundRecord>;
  let jobs: { id: string; data: { messageId: string; enqueuedAt: number } }[];
  let indexIds: string[];
  let d: DevicesDeps;

  beforeEach(() => {
    redis = new MemoryRedis();
    records = new Map();
    jobs = [];
    indexIds = [];
    const get = async (deviceId: string, id: string) => {
      const r = records.get(id);
      return r?.deviceId === deviceId ? r : undefined;
    };
    d = {
      directory: new DeviceDirectory(redis.client),
      sending: async () => ({ sentToday: 3 }) as SendingView,
      health: async () => ({ score: 90 }) as DeviceHealth,
      redis: redis.client,
      messages: { get, contentIdOf: async () => undefined },
      inbound: { get },
      revisions: { view: async () => ({}) },
      kinds: { read: async () => ({}), revisionOf: () => undefined },
      contents: { shown: async () => undefined },
      batches: { get: async () => undefined },
      index: {
        before: async (_d: string, before: number | undefined, count: number) =>
          indexIds
            .map((messageId, i) => ({ messageId, seq: indexIds.length - i }))
            .filter((e) => before === undefined || e.seq < before)
            .slice(0, count),
      },
      queueOf: () => ({ getJobs: async () => jobs }),
    } as unknown as DevicesDeps;
  });
  const session = (deviceId: string, fields: Record<string, string>) =>
    redis.hash(keys.session(deviceId), fields);

  describe('DeviceDirectory', () => {
    it('When the devices are listed, then every one with a session record or linked, with its status; account details only while connected', async () => {
      session('d-1', { status: 'connected', phone: '15550001111', name: 'Shop' });
      session('d-2', { status: 'connecting', phone: '15550002222', passkeyStep: 'assertion' });
      redis.addMembers(keys.linkedDevices(), 'd-1', 'd-3');
      redis.hash(keys.deviceQueue('d-1'), { messages: '4' });
      const listed = await d.directory.list();
      const byId = Object.fromEntries(listed.map((v) => [v.deviceId, v]));
      expect(Object.keys(byId).sort()).to.deep.equal(['d-1', 'd-2', 'd-3']);
      expect(byId['d-1']).to.deep.include({
        status: 'connected',
        linked: true,
        phone: '15550001111',
        name: 'Shop',
        queued: 4,
      });
      expect(byId['d-2']).to.deep.include({ status: 'connecting', linked: false, passkeyStep: 'assertion' });
      expect(byId['d-2']).not.to.have.property('phone');
      expect(byId['d-3']).to.deep.include({ status: 'disconnected', linked: true, queued: 0 });
    });

    it('When a pairing shows a QR, then the QR and its image; a passkey-gated one its step instead; none, undefined', async () => {
      redis.hash(keys.pairing('d-1'), { pairingId: 'p-1', state: 'showing', method: 'qrCode', qr: '2@abc' });
      const qr = await d.directory.pairing('d-1');
      expect(qr).to.deep.include({ state: 'showing', method: 'qrCode', qr: '2@abc' });
      expect(qr!.qrImage).to.match(/^data:image\/png;base64,/);
      const expiresAt = Date.now() + 60_000;
      redis.hash(keys.pairing('d-2'), {
        pairingId: 'p-2',
        state: 'showing',
        method: 'qrCode',
        qr: 'x',
        passkeyStep: 'assertion',
        passkeyExpiresAt: String(expiresAt),
      });
      expect(await d.directory.pairing('d-2')).to.deep.equal({
        state: 'showing',
        method: 'qrCode',
        passkey: { step: 'assertion', expiresAt: new Date(expiresAt).toISOString() },
      });
      expect(await d.directory.pairing('d-3')).to.equal(undefined);
    });
  });

  describe('devices', () => {
    it('When a device is linked or connecting, then it is shown with its sending and health; one disconnected without; a pairing beside it', async () => {
      session('d-1', { status: 'connected' });
      session('d-2', { status: 'disconnected' });
      redis.hash(keys.pairing('d-2'), {
        pairingId: 'p',
        state: 'failed',
        method: 'pairingCode',
        reason: 'timeout',
      });
      const listed = await listDevices(d);
      expect(listed.find((v) => v.deviceId === 'd-1')).to.deep.include({
        sending: { sentToday: 3 },
        health: { score: 90 },
      });
      expect(listed.find((v) => v.deviceId === 'd-2')).not.to.have.property('sending');
      expect(await showDevice(d, 'd-2')).to.deep.include({
        pairing: { state: 'failed', method: 'pairingCode', reason: 'timeout' },
      });
    });

    it("When one message is shown, then the device's own (a contact's as its inbound record); another device's, unknown or overlong is not_found", async () => {
      const inbound = inboundRecord('d-1', { text: 'hello' });
      records.set(inbound.messageId, inbound);
      const found = await deviceMessage(d, 'd-1', inbound.messageId);
      expect(found).to.deep.include({ kind: 'found' });
      expect((found as { message: Record<string, unknown> }).message).to.deep.include({
        messageId: inbound.messageId,
        text: 'hello',
      });
      expect(await deviceMessage(d, 'd-2', inbound.messageId)).to.deep.equal({ kind: 'not_found' });
      expect(await deviceMessage(d, 'd-1', 'x'.repeat(129))).to.deep.equal({ kind: 'not_found' });
    });

    it('When the reads are built over the services, then once per services object', () => {
      const services = {
        redis: redis.client,
        config: { store: { messageRetentionSeconds: 60 }, sendPolicy: {} },
      } as never;
      expect(devicesDeps(services)).to.equal(devicesDeps(services));
    });
  });

  describe('recent messages and their views', () => {
    it('When the recent messages are read, then the queue’s and the inbound ones of the index, merged newest first, with their batches’ counts', async () => {
      const old = sentRecord('d-1', {
        createdAt: '2026-01-01T10:00:00.000Z',
        batchId: 'b-1',
        status: 'sent',
      });
      const newer = sentRecord('d-1', {
        createdAt: '2026-01-01T12:00:00.000Z',
        batchId: 'b-1',
        status: 'failed',
      });
      const inbound = inboundRecord('d-1', { createdAt: '2026-01-01T11:00:00.000Z' } as never);
      for (const r of [old, newer, inbound]) records.set(r.messageId, r);
      jobs.push(
        { id: '1', data: { messageId: old.messageId, enqueuedAt: 1 } },
        { id: '2', data: { messageId: newer.messageId, enqueuedAt: 2 } },
      );
      indexIds.push(inbound.messageId, old.messageId);
      redis.hash(keys.message('d-1', inbound.messageId), { direction: 'inbound' });
      const recent = await deviceMessages(d, 'd-1', 10, 'all');
      expect(recent.messages.map((m) => m.messageId)).to.deep.equal([
        newer.messageId,
        inbound.messageId,
        old.messageId,
      ]);
      expect(recent.batches).to.have.length(1);
      const outboundOnly = await recentMessages(
        { ...d, queue: d.queueOf('d-1') } as never,
        'd-1',
        10,
        'outbound',
      );
      expect(outboundOnly.messages.map((m) => m.messageId)).to.deep.equal([newer.messageId, old.messageId]);
      expect(batchCounts([old, newer] as MessageRecord[])[0]).to.deep.include({ batchId: 'b-1' });
    });

    it('When records are viewed, then a long text is cut and says so, and a group message names its chat', async () => {
      const long = sentRecord('d-1', {
        text: 'a'.repeat(SHOWN_TEXT_CHARS + 5),
        to: '120363000000000001@g.us',
      } as never);
      const [view] = await messageViews(d, 'd-1', [long]);
      expect((view!.text as string).length).to.equal(SHOWN_TEXT_CHARS);
      expect(view!.textTruncated).to.equal(true);
      expect(view!.chat).to.deep.equal({ type: 'group', id: '120363000000000001@g.us' });
    });
  });
});
