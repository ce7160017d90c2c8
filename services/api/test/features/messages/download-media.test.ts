import { expect } from 'chai';
import { keys, type DeviceCommandReply } from '@mgw/contracts';
import { storageContext } from '@mgw/store';
import { downloadMedia, type DownloadDeps } from '../../../src/features/messages/download-media.js';
import { ownMessage, ownRecordAndFields } from '../../../src/features/messages/own-message.js';
import { HolderFixture } from '../../helpers/fake-holder.js';
import { messageStores, receivePdf, sendText } from './message-fixture.js';

/**
 * The inbound attachment download without an API: messages recorded in the run's Redis, a media
 * store that answers as told, and a fake sender that hands the file over as the real one does
 * (sealed bytes under the command's id, then `ok`).
 */
describe('downloadMedia: an inbound attachment from the media store or through the holder (real Redis, a fake sender)', () => {
  const fx = new HolderFixture('download-media-test');
  let deps: DownloadDeps;
  let deviceId: string;
  let kept: Map<string, Buffer | Error>;
  let asked: string[];
  const file = Buffer.from('%PDF-1.4 a small invoice\n'.repeat(16));

  beforeEach(() => {
    fx.setUp();
    kept = new Map();
    asked = [];
    deps = {
      ...messageStores(fx),
      media: {
        bytes: async (device, mediaId) => {
          asked.push(`${device}/${mediaId}`);
          const got = kept.get(mediaId);
          if (got instanceof Error) throw got;
          return got;
        },
      },
      // No session check: the file comes from WhatsApp's media host, as the route asks.
      holder: { commands: fx.holder.commands },
    };
    deviceId = fx.freshDevice('dm');
  });
  afterEach(() => fx.tearDown());

  /** A holder handing `file` over under the command's id, as the sender's download does. */
  const handingOver =
    (
      h: { mimeType?: string; fileName?: string } = { mimeType: 'application/pdf', fileName: 'invoice.pdf' },
    ) =>
    async (cmd: { requestId: string }): Promise<DeviceCommandReply> => {
      const key = keys.mediaDownload(deviceId, cmd.requestId);
      await fx.redis.hset(key, { bytes: deps.encryption.seal(file, storageContext(key, 'bytes')), ...h });
      return { ok: true };
    };

  it('When the holder downloads it, then the file is its bytes with the type and name it gave, and the hand-over key is gone (a device not connected is asked all the same)', async () => {
    const id = await receivePdf(deps, deviceId);
    const heard = await fx.fakeSender(
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
    expect(heard.map(({ requestId: _r, ...c }) => c)).to.deep.equal([
      { type: 'download-media', messageId: id, deviceId },
    ]);
    expect(await fx.redis.keys(keys.mediaDownload(deviceId, '*'))).to.deep.equal([]);
  });

  it("When the holder hands over no type or name, then the message's attachment says them", async () => {
    const id = await receivePdf(deps, deviceId);
    await fx.fakeSender(deviceId, handingOver({}));
    const outcome = await downloadMedia(deps, deviceId, id);
    expect(outcome.ok && [outcome.file.mimeType, outcome.file.fileName]).to.deep.equal([
      'application/pdf',
      'invoice.pdf',
    ]);
  });

  it('When the device kept the attachment on arrival, then it is served from the media store and the holder is not asked', async () => {
    const id = await receivePdf(deps, deviceId, { keptMedia: { mediaId: 'med-1' } });
    kept.set('med-1', file);
    const heard = await fx.fakeSender(deviceId, handingOver());

    expect(await downloadMedia(deps, deviceId, id)).to.deep.equal({
      ok: true,
      file: { bytes: file, mimeType: 'application/pdf', fileName: 'invoice.pdf' },
    });
    expect(asked).to.deep.equal([`${deviceId}/med-1`]);
    expect(heard).to.deep.equal([]);
  });

  it('When the kept object is gone or the media store fails, then the attachment is downloaded through the holder', async () => {
    const gone = await receivePdf(deps, deviceId, { keptMedia: { mediaId: 'med-gone' } });
    const failing = await receivePdf(deps, deviceId, { keptMedia: { mediaId: 'med-failing' } });
    kept.set('med-failing', new Error('S3 is down'));
    const heard = await fx.fakeSender(deviceId, handingOver());

    for (const id of [gone, failing]) {
      const outcome = await downloadMedia(deps, deviceId, id);
      expect(outcome.ok && outcome.file.bytes.equals(file), id).to.equal(true);
    }
    expect(asked).to.have.length(2);
    expect(heard).to.have.length(2);
  });

  it('When nobody holds the device, then no_device at once; when the holder fails, its code; when it says ok and leaves no bytes, not_handed_over', async () => {
    const id = await receivePdf(deps, deviceId);
    const started = Date.now();
    expect(await downloadMedia(deps, deviceId, id)).to.deep.equal({ ok: false, reason: 'no_device' });
    expect(Date.now() - started).to.be.below(1000);

    const answers: DeviceCommandReply[] = [{ ok: false, error: 'download failed' }, { ok: true }];
    await fx.fakeSender(deviceId, () => answers.shift());
    expect(await downloadMedia(deps, deviceId, id)).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'download failed',
    });
    expect(await downloadMedia(deps, deviceId, id)).to.deep.equal({ ok: false, reason: 'not_handed_over' });
  });

  it("When the message is unknown, another device's, or one sent through the gateway, then unknown_message or no_attachment and no holder is asked", async () => {
    const id = await receivePdf(deps, deviceId);
    const sent = await sendText(deps, deviceId);
    const other = fx.freshDevice('dm');
    const heard = await fx.fakeSender(deviceId, handingOver());

    expect(await downloadMedia(deps, other, id)).to.deep.equal({ ok: false, reason: 'unknown_message' });
    expect(await downloadMedia(deps, deviceId, '00000000-0000-4000-8000-000000000000')).to.deep.equal({
      ok: false,
      reason: 'unknown_message',
    });
    expect(await downloadMedia(deps, deviceId, sent)).to.deep.equal({ ok: false, reason: 'no_attachment' });
    const text = await receivePdf(deps, deviceId, { attachment: undefined, text: 'no file' });
    expect(await downloadMedia(deps, deviceId, text)).to.deep.equal({ ok: false, reason: 'no_attachment' });
    expect(heard).to.deep.equal([]);
  });
});

describe('ownMessage, ownRecordAndFields: a message of the device and only of the device (real Redis)', () => {
  const fx = new HolderFixture('own-message-test');
  beforeEach(() => fx.setUp());
  afterEach(() => fx.tearDown());

  it("When the id is the device's message, then its record (and fields); another device's, an unknown or an overlong id is undefined", async () => {
    const s = messageStores(fx);
    const deviceId = fx.freshDevice('om');
    const other = fx.freshDevice('om');
    const inbound = await receivePdf(s, deviceId);
    const sent = await sendText(s, deviceId);

    const own = await ownRecordAndFields(s, deviceId, inbound);
    expect(own?.record).to.include({ messageId: inbound, deviceId, direction: 'inbound' });
    expect(own?.fields.direction).to.equal('inbound');
    expect(await ownMessage(s, deviceId, sent)).to.include({
      messageId: sent,
      deviceId,
      direction: 'outbound',
    });

    for (const [device, id] of [
      [other, inbound],
      [other, sent],
      [deviceId, '00000000-0000-4000-8000-000000000000'],
      [deviceId, 'x'.repeat(129)],
    ] as const) {
      expect(await ownRecordAndFields(s, device, id), `${device} ${id}`).to.equal(undefined);
      expect(await ownMessage(s, device, id), `${device} ${id}`).to.equal(undefined);
    }
  });
});
