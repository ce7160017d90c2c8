import { expect } from 'chai';
import { keys, type MediaObject } from '@mgw/contracts';
import type { MessageDeps } from './get-message.js';
import { inboundRecord, sentRecord, type MemoryRecords } from './memory-records.js';
import { deviceId, lid, messageFixture, type MessageFixture } from './message-fixture.js';
import { getMessage } from './get-message.js';

/**
 * Reading messages without an API: the records in memory, the device's phone <-> LID map in an
 * in-memory Redis, and the stores of what is shown beside a record answering as told.
 */
describe('getMessage: one message of the device, with its contact, attachment and pool (in-memory records and stores)', () => {
  let records: MemoryRecords;
  let objects: MessageFixture['objects'];
  let owners: MessageFixture['owners'];
  let deps: MessageDeps;

  beforeEach(() => {
    ({ records, objects, owners, deps } = messageFixture());
  });

  it("When the message is the device's, then its record with its contact; another device's or an unknown id is undefined", async () => {
    const inbound = inboundRecord(deviceId, {
      text: 'hello there',
      from: '15550001234',
      contact: { phone: '15550001234' },
    });
    const sent = sentRecord(deviceId);
    records.put(inbound);
    records.put(sent);

    expect(await getMessage(deps, { deviceId }, inbound.messageId)).to.deep.include({
      messageId: inbound.messageId,
      direction: 'inbound',
      text: 'hello there',
      contact: { phone: '15550001234', lid },
    });
    expect(await getMessage(deps, { deviceId }, sent.messageId)).to.deep.include({
      messageId: sent.messageId,
      direction: 'outbound',
      contact: { phone: '15550001234', lid },
    });
    expect(await getMessage(deps, { deviceId: 'rm-other' }, inbound.messageId)).to.equal(undefined);
    expect(await getMessage(deps, { deviceId }, 'unknown')).to.equal(undefined);
  });

  it('When an inbound attachment was kept, then it shows a URL signed now; once its object is gone, the record no longer names it', async () => {
    const attachment = {
      type: 'document',
      mimeType: 'application/pdf',
      fileName: 'invoice.pdf',
      size: 400,
    };
    const kept = inboundRecord(deviceId, { attachment: { ...attachment, mediaId: 'med-1' } });
    const gone = inboundRecord(deviceId, { attachment: { ...attachment, mediaId: 'med-gone' } });
    records.put(kept);
    records.put(gone);
    objects.set('med-1', {
      mediaId: 'med-1',
      deviceId,
      url: 'https://s3.test/med-1?sig',
      urlExpiresAt: '2026-01-01T01:00:00.000Z',
    } as unknown as MediaObject);

    const shown = (await getMessage(deps, { deviceId }, kept.messageId)) as { attachment: unknown };
    expect(shown.attachment).to.deep.equal({
      ...attachment,
      mediaId: 'med-1',
      url: 'https://s3.test/med-1?sig',
      urlExpiresAt: '2026-01-01T01:00:00.000Z',
    });
    expect(
      ((await getMessage(deps, { deviceId }, gone.messageId)) as { attachment: unknown }).attachment,
    ).to.deep.equal(attachment);
  });

  it('When a pool token asks, then the message is read on the device of the pool that holds it; one the pool does not know is undefined', async () => {
    const inbound = inboundRecord(deviceId, { text: 'to the pool' });
    records.put(inbound);
    const asker = { deviceId: 'pool:p-1', poolId: 'p-1' };
    expect(await getMessage(deps, asker, inbound.messageId), 'not yet the pool’s').to.equal(undefined);
    owners.set(`p-1\n${inbound.messageId}`, deviceId);
    expect(await getMessage(deps, asker, inbound.messageId)).to.deep.include({
      messageId: inbound.messageId,
      deviceId,
    });
  });

  it('When a linked device’s OTP fell back to its pool’s cloud device, then the linked device reads that record; another device, or a pool token, does not', async () => {
    const cloudId = 'rm-cloud';
    const otp = sentRecord(cloudId);
    records.put(otp);
    expect(await getMessage(deps, { deviceId }, otp.messageId), 'no pointer yet').to.equal(undefined);
    // As the OTP route's rememberFallback writes it.
    await deps.redis.set(keys.otpSentVia(deviceId, otp.messageId), cloudId, 'EX', 60);
    expect(await getMessage(deps, { deviceId }, otp.messageId)).to.deep.include({
      messageId: otp.messageId,
      deviceId: cloudId,
    });
    expect(await getMessage(deps, { deviceId: 'rm-other' }, otp.messageId)).to.equal(undefined);
    expect(await getMessage(deps, { deviceId, poolId: 'p-1' }, otp.messageId)).to.equal(undefined);
  });
});
