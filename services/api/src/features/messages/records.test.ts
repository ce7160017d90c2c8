import { expect } from 'chai';
import { inboundRecord, sentRecord, type MemoryRecords } from './memory-records.js';
import { deviceId, messageFixture } from './message-fixture.js';
import { readRecordAndFields, recordFromFields } from './records.js';

/**
 * Reading messages without an API: the records in memory, the device's phone <-> LID map in an
 * in-memory Redis, and the stores of what is shown beside a record answering as told.
 */
describe("readRecordAndFields, recordFromFields: a record read once, made by its direction's store (in-memory records)", () => {
  let records: MemoryRecords;

  beforeEach(() => {
    ({ records } = messageFixture());
  });

  it('When a record is read, then its fields are read once and the record made from them by its direction’s store', async () => {
    const inbound = inboundRecord(deviceId, { text: 'hello' });
    const sent = sentRecord(deviceId);
    records.put(inbound);
    records.put(sent);

    expect(await readRecordAndFields(records, deviceId, inbound.messageId)).to.deep.equal({
      record: inbound,
      fields: records.fieldsOf(deviceId, inbound.messageId),
    });
    expect((await readRecordAndFields(records, deviceId, sent.messageId)).record).to.deep.equal(sent);
    expect(await readRecordAndFields(records, deviceId, 'gone')).to.deep.equal({ fields: {} });
    expect(await recordFromFields(records, deviceId, sent.messageId, {})).to.equal(undefined);
    expect(records.reads).to.deep.equal([inbound.messageId, sent.messageId, 'gone']);
  });
});
