import { expect } from 'chai';
import { keys, type DeviceCommandReply } from '@mgw/contracts';
import { storageContext } from '@mgw/store';
import { MemoryHolder, said, MemoryRedis } from '../test-support.js';
import { DOWNLOAD_TIMEOUT_SECONDS, downloadMedia, type DownloadDeps } from './download-media.js';
import { MemoryRecords, inboundRecord, sentRecord } from './memory-records.js';

/**
 * The inbound attachment download without an API: the records in memory, a media store that
 * answers as told, and an in-memory holder that hands the file over as the real one does (sealed
 * bytes under the command's id in Redis — in memory here — then `ok`).
 */
describe('downloadMedia: an inbound attachment from the media store or through the holder (an in-memory holder)', () => {
  const deviceId = 'dm-1';
  const file = Buffer.from('%PDF-1.4 a small invoice\n'.repeat(16));
  const pdf = { type: 'document', mimeType: 'application/pdf', fileName: 'invoice.pdf', size: 400 };
  let mh: MemoryHolder;
  let redis: MemoryRedis;
  let records: MemoryRecords;
  let deps: DownloadDeps;
  let kept: Map<string, Buffer | Error>;
  let asked: string[];

  beforeEach(() => {
    mh = new MemoryHolder();
    redis = new MemoryRedis();
    records = new MemoryRecords();
    kept = new Map();
    asked = [];
    deps = {
      messages: records.messages,
      inbound: records.inbound,
      encryption: records.encryption,
      redis: redis.client,
      media: {
        bytes: async (device, mediaId) => {
          asked.push(`${device}/${mediaId}`);
          const got = kept.get(mediaId);
          if (got instanceof Error) throw got;
          return got;
        },
      },
      // No session check: the file comes from WhatsApp's media host, as the route asks.
      holder: mh.unchecked,
      // No device of these is a Cloud API number (cloud-media.test.ts: those that are).
      cloud: {
        devices: { get: () => Promise.resolve(undefined) },
        graph: { downloadMedia: () => Promise.reject(new Error('not a cloud device')) },
      },
    };
  });

  /** A PDF a contact sent the device (its id). */
  function receivePdf(more: Parameters<typeof inboundRecord>[1] = {}): string {
    const record = inboundRecord(deviceId, { attachment: { ...pdf }, ...more });
    records.put(record);
    return record.messageId;
  }
  /** A holder handing `file` over under the command's id, as the sender's download does. */
  const handingOver =
    (
      h: { mimeType?: string; fileName?: string } = { mimeType: 'application/pdf', fileName: 'invoice.pdf' },
    ) =>
    async (cmd: { requestId: string }): Promise<DeviceCommandReply> => {
      const key = keys.mediaDownload(deviceId, cmd.requestId);
      redis.hash(key, { bytes: deps.encryption.seal(file, storageContext(key, 'bytes')), ...h });
      return { ok: true };
    };

  it('When the holder downloads it, then the file is its bytes with the type and name it gave, and the hand-over key is gone (a device not connected is asked all the same)', async () => {
    const id = receivePdf();
    const heard = mh.fakeSender(
      deviceId,
      handingOver({ mimeType: 'application/x-pdf', fileName: 'inv 1.pdf' }),
    );

    const outcome = await downloadMedia(deps, deviceId, id);

    expect(outcome.ok && outcome.file.bytes.equals(file)).to.equal(true);
    expect(outcome.ok && { ...outcome.file, bytes: undefined }).to.deep.equal({
      bytes: undefined,
      mimeType: 'application/x-pdf',
      fileName: 'inv 1.pdf',
    });
    expect(heard.map(said)).to.deep.equal([{ type: 'download-media', messageId: id, deviceId }]);
    expect(mh.asked[0]!.waitSeconds).to.equal(DOWNLOAD_TIMEOUT_SECONDS);
    expect(await redis.keys(keys.mediaDownload(deviceId, '*'))).to.deep.equal([]);
  });

  it("When the holder hands over no type or name, then the message's attachment says them", async () => {
    const id = receivePdf();
    mh.fakeSender(deviceId, handingOver({}));
    const outcome = await downloadMedia(deps, deviceId, id);
    expect(outcome.ok && [outcome.file.mimeType, outcome.file.fileName]).to.deep.equal([
      'application/pdf',
      'invoice.pdf',
    ]);
  });

  it('When the device kept the attachment on arrival, then it is served from the media store and the holder is not asked', async () => {
    const id = receivePdf({ attachment: { ...pdf, mediaId: 'med-1' } });
    kept.set('med-1', file);
    const heard = mh.fakeSender(deviceId, handingOver());

    expect(await downloadMedia(deps, deviceId, id)).to.deep.equal({
      ok: true,
      file: { bytes: file, mimeType: 'application/pdf', fileName: 'invoice.pdf' },
    });
    expect(asked).to.deep.equal([`${deviceId}/med-1`]);
    expect(heard).to.deep.equal([]);
  });

  it('When the kept object is gone or the media store fails, then the attachment is downloaded through the holder', async () => {
    const gone = receivePdf({ attachment: { ...pdf, mediaId: 'med-gone' } });
    const failing = receivePdf({ attachment: { ...pdf, mediaId: 'med-failing' } });
    kept.set('med-failing', new Error('S3 is down'));
    const heard = mh.fakeSender(deviceId, handingOver());

    for (const id of [gone, failing]) {
      const outcome = await downloadMedia(deps, deviceId, id);
      expect(outcome.ok && outcome.file.bytes.equals(file), id).to.equal(true);
    }
    expect(asked).to.have.length(2);
    expect(heard).to.have.length(2);
  });

  it('When nobody holds the device, then no_device; when the holder fails, its code; when it never answers, timeout; when it says ok and leaves no bytes, not_handed_over', async () => {
    const id = receivePdf();
    expect(await downloadMedia(deps, deviceId, id)).to.deep.equal({ ok: false, reason: 'no_device' });

    const answers: (DeviceCommandReply | undefined)[] = [
      { ok: false, error: 'download failed' },
      undefined,
      { ok: true },
    ];
    mh.fakeSender(deviceId, () => answers.shift());
    expect(await downloadMedia(deps, deviceId, id)).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'download failed',
    });
    expect(await downloadMedia(deps, deviceId, id)).to.deep.equal({ ok: false, reason: 'timeout' });
    expect(await downloadMedia(deps, deviceId, id)).to.deep.equal({ ok: false, reason: 'not_handed_over' });
  });

  it("When the message is unknown, another device's, or one sent through the gateway, then unknown_message or no_attachment and no holder is asked", async () => {
    const id = receivePdf();
    const sent = sentRecord(deviceId);
    records.put(sent);
    const heard = mh.fakeSender(deviceId, handingOver());

    expect(await downloadMedia(deps, 'dm-other', id)).to.deep.equal({ ok: false, reason: 'unknown_message' });
    expect(await downloadMedia(deps, deviceId, 'unknown')).to.deep.equal({
      ok: false,
      reason: 'unknown_message',
    });
    expect(await downloadMedia(deps, deviceId, sent.messageId)).to.deep.equal({
      ok: false,
      reason: 'no_attachment',
    });
    const text = receivePdf({ attachment: undefined, text: 'no file' });
    expect(await downloadMedia(deps, deviceId, text)).to.deep.equal({ ok: false, reason: 'no_attachment' });
    expect(heard).to.deep.equal([]);
  });
});
