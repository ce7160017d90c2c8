import { expect } from 'chai';
import { GraphClient } from '@mgw/cloud';
import { SANDBOX_NUMBER, startCloudSim, type CloudSimHandle } from '@mgw/cloud-sim';
import { parseAllowedPrivateHosts } from '@mgw/common';
import type { CloudDeviceConfig } from '@mgw/contracts';
import { MemoryHolder, MemoryRedis } from '../test-support.js';
import { downloadCloudMedia } from './cloud-media.js';
import { downloadMedia, type DownloadDeps } from './download-media.js';
import { MemoryRecords, inboundRecord } from './memory-records.js';

/** The simulator's sandbox number (its own credentials, no real account's). */
const NUMBER = SANDBOX_NUMBER;
const CONFIG: CloudDeviceConfig = {
  phoneNumberId: NUMBER.id,
  wabaId: NUMBER.wabaId,
  accessToken: NUMBER.accessToken,
  appSecret: NUMBER.appSecret,
  verifyToken: 'verify',
  throughputPerSecond: 80,
  graphVersion: 'v21.0',
  otpTemplate: 'verification_code',
  updatedAt: '2026-11-30T00:00:00.000Z',
};

/**
 * A Cloud API device's inbound attachment: downloaded by the API from Meta (the simulator, over
 * the real GraphClient), the holder never asked; the records in memory as download-media.test.ts
 * keeps them.
 */
describe('downloadMedia: a Cloud API device’s attachment comes from Meta, not from a holder', () => {
  const deviceId = 'cloud-dm-1';
  let sim: CloudSimHandle;
  let records: MemoryRecords;
  let deps: DownloadDeps;
  let mh: MemoryHolder;
  let config: CloudDeviceConfig | undefined;

  before(async () => {
    sim = await startCloudSim({ numbers: [{ ...NUMBER }] });
  });
  after(() => sim.close());
  beforeEach(() => {
    records = new MemoryRecords();
    mh = new MemoryHolder();
    config = CONFIG;
    deps = {
      messages: records.messages,
      inbound: records.inbound,
      encryption: records.encryption,
      redis: new MemoryRedis().client,
      media: { bytes: () => Promise.resolve(undefined) },
      holder: mh.unchecked,
      cloud: {
        devices: { get: () => Promise.resolve(config) },
        graph: new GraphClient({ baseUrl: sim.url, allowList: parseAllowedPrivateHosts('127.0.0.1') }),
      },
    };
  });

  /** A document the contact sent the number (the simulator keeps it), recorded as the webhook records it. */
  function received(): { messageId: string; bytes: Buffer } {
    const { files } = sim.deliverForm(NUMBER.id, 'message.document');
    const record = inboundRecord(deviceId, {
      attachment: { type: 'document', mimeType: 'application/pdf', fileName: 'invoice-0042.pdf', size: 0 },
    });
    records.put(record, { cloudMedia: files[0]!.id });
    return { messageId: record.messageId, bytes: files[0]!.bytes };
  }

  it('When the attachment is asked for, then its exact bytes come from Meta with the type Meta names and the name the message gave', async () => {
    const { messageId, bytes } = received();
    const heard = mh.fakeSender(deviceId, () => Promise.resolve({ ok: true }));
    const outcome = await downloadMedia(deps, deviceId, messageId);
    expect(outcome).to.deep.equal({
      ok: true,
      file: { bytes, mimeType: 'application/pdf', fileName: 'invoice-0042.pdf' },
    });
    expect(heard, 'no holder is asked').to.deep.equal([]);
  });

  it('When Meta no longer has the file, or the device is no Cloud API number now, then meta_unavailable', async () => {
    const gone = inboundRecord(deviceId, {
      attachment: { type: 'image', mimeType: 'image/jpeg', size: 0 },
    });
    records.put(gone, { cloudMedia: '999999999' });
    expect(await downloadMedia(deps, deviceId, gone.messageId)).to.deep.equal({
      ok: false,
      reason: 'meta_unavailable',
    });
    const { messageId } = received();
    config = undefined;
    expect(await downloadMedia(deps, deviceId, messageId)).to.deep.equal({
      ok: false,
      reason: 'meta_unavailable',
    });
    // Asked directly, the same: the device's configuration is read before Meta is.
    expect(await downloadCloudMedia(deps.cloud, deviceId, '1', undefined)).to.deep.equal({
      ok: false,
      reason: 'meta_unavailable',
    });
  });

  it('When the token no longer reaches the number, then meta_unavailable and the token is in no answer', async () => {
    const { messageId } = received();
    config = { ...CONFIG, accessToken: 'token-revoked' };
    const outcome = await downloadMedia(deps, deviceId, messageId);
    expect(outcome).to.deep.equal({ ok: false, reason: 'meta_unavailable' });
    expect(JSON.stringify(outcome)).not.to.contain('token');
  });
});
