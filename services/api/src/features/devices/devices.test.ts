import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { MemoryRedis, inboundRecord } from '../test-support.js';
import { devicesFixture, type DevicesFixture } from './device-fixture.js';
import {
  deviceMessage,
  devicesDeps,
  devicesOfWorkspace,
  listDevices,
  showDevice,
  type DevicesDeps,
} from './devices.js';

/**
 * The admin Devices and Messages pages' reads without an API: the session and pairing records in an
 * in-memory Redis (as the connection service and the senders write them), the message stores and
 * the send queue faked.
 */
describe('devices: a device with its standing, one of its messages, the reads built once (in-memory Redis)', () => {
  let redis: MemoryRedis;
  let records: DevicesFixture['records'];
  let d: DevicesDeps;
  let session: DevicesFixture['session'];

  beforeEach(() => {
    ({ redis, records, d, session } = devicesFixture());
  });

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

  it("When a workspace's console lists the devices, then those its set lists and those of the directory it owns; default owns every device no workspace names", async () => {
    session('a-linked', { status: 'connected' });
    session('g-linked', { status: 'connected' });
    session('old-one', { status: 'disconnected' });
    const owners = new Map([
      ['a-linked', 'acme'],
      ['a-new', 'acme'],
      ['g-linked', 'globex'],
    ]);
    const sets: Record<string, string[]> = { acme: ['a-new', 'a-linked'], default: [] };
    const only = (workspace: string) => ({
      workspace,
      devices: async (w: string) => sets[w] ?? [],
      ownerOf: async (id: string) => owners.get(id) ?? 'default',
    });
    expect(await devicesOfWorkspace(d, only('acme'))).to.deep.equal(['a-linked', 'a-new']);
    expect(await devicesOfWorkspace(d, only('default'))).to.deep.equal(['old-one']);
    const listed = await listDevices(d, only('acme'));
    expect(listed.map((v) => [v.deviceId, v.status])).to.deep.equal([
      ['a-linked', 'connected'],
      ['a-new', 'disconnected'],
    ]);
    expect((await listDevices(d)).map((v) => v.deviceId)).to.include.members([
      'a-linked',
      'g-linked',
      'old-one',
    ]);
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
