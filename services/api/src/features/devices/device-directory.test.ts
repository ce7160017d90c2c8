import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { CloudDeviceStore, Encryption } from '@mgw/store';
import { MemoryRedis, MemorySessions } from '../test-support.js';
import { devicesFixture, type DevicesFixture } from './device-fixture.js';
import { DeviceDirectory } from './device-directory.js';

/**
 * The admin Devices page's directory without an API: the session and pairing records in an
 * in-memory Redis (as the connection service and the senders write them).
 */
describe('DeviceDirectory: every device with its status, and its pairing (in-memory Redis)', () => {
  let redis: MemoryRedis;
  let session: DevicesFixture['session'];
  let directory: DeviceDirectory;

  let cloud: CloudDeviceStore;

  beforeEach(() => {
    ({ redis, session } = devicesFixture());
    cloud = new CloudDeviceStore(redis.client, Encryption.fromEnv(), new MemorySessions());
    directory = new DeviceDirectory(redis.client, cloud);
  });

  it('When Cloud API devices are listed, then each with engine cloud (configured ones without a session record too), its own status, number and name', async () => {
    const input = (id: string) => ({
      phoneNumberId: id,
      wabaId: '2001',
      accessToken: 'token',
      appSecret: 'secret',
      verifyToken: 'verify',
    });
    await cloud.set('c-new', input('1001'));
    await cloud.set('c-on', input('1002'));
    await cloud.keepProfile('c-on', {
      displayPhoneNumber: '+1 555-010-0002',
      verifiedName: 'Shop Two',
      qualityRating: 'GREEN',
      checkedAt: '2026-11-30T10:00:00.000Z',
    });
    await cloud.setState('c-on', { status: 'connected', at: '2026-11-30T10:00:00.000Z' });
    redis.addMembers(keys.linkedDevices(), 'c-on', 'd-1');
    // A stale session record of the linked protocol does not speak for a cloud device.
    session('c-on', { status: 'disconnected', phone: '15550009999' });
    const byId = Object.fromEntries((await directory.list()).map((v) => [v.deviceId, v]));
    expect(Object.keys(byId).sort()).to.deep.equal(['c-new', 'c-on', 'd-1']);
    expect(byId['c-new']).to.deep.equal({
      deviceId: 'c-new',
      engine: 'cloud',
      status: 'disconnected',
      linked: false,
      queued: 0,
    });
    expect(byId['c-on']).to.deep.equal({
      deviceId: 'c-on',
      engine: 'cloud',
      status: 'connected',
      linked: true,
      queued: 0,
      phone: '15550100002',
      name: 'Shop Two',
      connectedAt: '2026-11-30T10:00:00.000Z',
    });
    expect(byId['d-1']).to.deep.include({ engine: 'linked' });
  });

  it('When the devices are listed, then every one with a session record or linked, with its status; account details only while connected', async () => {
    session('d-1', { status: 'connected', phone: '15550001111', name: 'Shop' });
    session('d-2', { status: 'connecting', phone: '15550002222', passkeyStep: 'assertion' });
    redis.addMembers(keys.linkedDevices(), 'd-1', 'd-3');
    redis.hash(keys.deviceQueue('d-1'), { messages: '4' });
    const listed = await directory.list();
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
    const qr = await directory.pairing('d-1');
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
    expect(await directory.pairing('d-2')).to.deep.equal({
      state: 'showing',
      method: 'qrCode',
      passkey: { step: 'assertion', expiresAt: new Date(expiresAt).toISOString() },
    });
    expect(await directory.pairing('d-3')).to.equal(undefined);
  });
});
