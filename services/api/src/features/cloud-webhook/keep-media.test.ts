import { expect } from 'chai';
import { GraphClient } from '@mgw/cloud';
import { SANDBOX_NUMBER, startCloudSim, type CloudSimHandle } from '@mgw/cloud-sim';
import { parseAllowedPrivateHosts } from '@mgw/common';
import { createMetrics, type CloudDeviceConfig, type MediaSettings } from '@mgw/contracts';
import type { MediaPut } from '@mgw/store';
import { keepOnArrival, type ArrivingMedia, type KeepMediaDeps } from './keep-media.js';

/** The simulator's sandbox number (its own credentials, no real account's). */
const NUMBER = SANDBOX_NUMBER;
const CONFIG = {
  phoneNumberId: NUMBER.id,
  wabaId: NUMBER.wabaId,
  accessToken: NUMBER.accessToken,
  graphVersion: 'v21.0',
} as CloudDeviceConfig;

/**
 * A cloud attachment kept on arrival: downloaded from Meta (the simulator, over the real
 * GraphClient) into a media store that stands for S3 here (the S3 store itself is tested with
 * the linked engine's keeper: services/sender/test/e2e/media-store.test.ts).
 */
describe('cloud-webhook: an attachment kept on arrival, as a linked device keeps one', () => {
  let sim: CloudSimHandle;
  let puts: (MediaPut & { deviceId: string })[];
  let settings: MediaSettings;
  let store: 'working' | 'full' | 'down';
  let deps: KeepMediaDeps;
  let logged: string[];

  before(async () => {
    sim = await startCloudSim({ numbers: [{ ...NUMBER }] });
  });
  after(() => sim.close());
  beforeEach(() => {
    puts = [];
    logged = [];
    settings = { inboundTypes: ['image', 'document'], inboundMaxBytes: 1024 * 1024 };
    store = 'working';
    deps = {
      media: {
        kind: 's3',
        put: (deviceId, input) => {
          if (store === 'down') return Promise.reject(new Error('ECONNREFUSED'));
          if (store === 'full')
            return Promise.resolve({
              refused: 'quota_full',
              stored: { bytes: 1, objects: 1 },
              limit: { bytes: 1, objects: 1 },
            });
          puts.push({ deviceId, ...input });
          return Promise.resolve({ mediaId: `med_${puts.length}` } as never);
        },
        show: (_deviceId, mediaId) =>
          Promise.resolve({
            mediaId,
            url: `https://s3.example/${mediaId}`,
            urlExpiresAt: '2026-12-01T00:00:00.000Z',
          } as never),
      },
      settings: { get: () => Promise.resolve(settings) },
      devices: { get: () => Promise.resolve(CONFIG) },
      graph: new GraphClient({ baseUrl: sim.url, allowList: parseAllowedPrivateHosts('127.0.0.1') }),
      recorded: (_deviceId, wamid) => Promise.resolve(wamid === 'wamid.seen'),
      metrics: createMetrics(),
      logger: { warn: (message: string) => void logged.push(message) },
    };
  });

  /** A document the contact sent (the simulator keeps it), about to be recorded. */
  function arriving(wamid = 'wamid.new'): ArrivingMedia & { bytes: Buffer } {
    const { files } = sim.deliverForm(NUMBER.id, 'message.document');
    return {
      wamid,
      mediaId: files[0]!.id,
      type: 'document',
      bytes: files[0]!.bytes,
      input: {
        platformMessageId: wamid,
        contact: { phone: '15550102000' },
        receivedAt: new Date(),
        attachment: { type: 'document', mimeType: 'application/pdf', fileName: 'invoice-0042.pdf', size: 0 },
      },
    };
  }

  it('When the device keeps its type, then the exact file is stored first and the message names it, with its real size', async () => {
    const doc = arriving();
    await keepOnArrival(deps, 'd1', doc);
    expect(puts).to.have.length(1);
    expect(puts[0]!.bytes.equals(doc.bytes)).to.equal(true);
    expect(puts[0]).to.deep.include({
      deviceId: 'd1',
      mimeType: 'application/pdf',
      fileName: 'invoice-0042.pdf',
      source: 'inbound',
      messageId: doc.input.messageId,
    });
    expect(doc.input.keptMedia).to.deep.equal({
      mediaId: 'med_1',
      url: 'https://s3.example/med_1',
      urlExpiresAt: '2026-12-01T00:00:00.000Z',
    });
    expect(doc.input.attachment.size).to.equal(doc.bytes.length);
  });

  it('When the type is not kept, the store is Redis, or the message was recorded before, then nothing is downloaded', async () => {
    settings = { ...settings, inboundTypes: ['image'] };
    const doc = arriving();
    await keepOnArrival(deps, 'd1', doc);
    settings = { ...settings, inboundTypes: ['document'] };
    await keepOnArrival({ ...deps, media: { ...deps.media, kind: 'redis' } }, 'd1', doc);
    await keepOnArrival(deps, 'd1', arriving('wamid.seen'));
    expect(puts).to.deep.equal([]);
    expect(doc.input).not.to.have.property('keptMedia');
  });

  it('When the file is over the device’s bound, Meta no longer has it, the quota is full or the store is down, then the message says why', async () => {
    const cases: [() => void, string, ArrivingMedia][] = [
      [() => (settings = { ...settings, inboundMaxBytes: 8 }), 'too_large', arriving()],
      [() => undefined, 'download_failed', { ...arriving(), mediaId: '999999999' }],
      [() => (store = 'full'), 'quota_full', arriving()],
      [() => (store = 'down'), 'media_store_unavailable', arriving()],
    ];
    for (const [given, why, doc] of cases) {
      settings = { inboundTypes: ['document'], inboundMaxBytes: 1024 * 1024 };
      store = 'working';
      given();
      await keepOnArrival(deps, 'd1', doc);
      expect(doc.input.keptMedia, why).to.deep.equal({ mediaError: why });
      expect(doc.input, why).not.to.have.property('messageId');
    }
    expect(logged).to.deep.equal([
      'inbound media not downloaded to keep',
      'inbound media not kept: the media store failed',
    ]);
  });
});
