import { expect } from 'chai';
import { sentRecord, type MemoryRecords } from './memory-records.js';
import { deviceId, messageFixture } from './message-fixture.js';
import { ownMessage, ownRecordAndFields } from './own-message.js';

/**
 * Reading messages without an API: the records in memory, the device's phone <-> LID map in an
 * in-memory Redis, and the stores of what is shown beside a record answering as told.
 */
describe("ownRecordAndFields, ownMessage: a record of the device, no other's (in-memory records)", () => {
  let records: MemoryRecords;

  beforeEach(() => {
    ({ records } = messageFixture());
  });

  it("When an id is another device's, unknown or too long to be one, then undefined (and an overlong one costs no read)", async () => {
    const theirs = sentRecord('rm-other');
    records.put(theirs);
    const mine = sentRecord(deviceId);
    records.put(mine);

    expect((await ownRecordAndFields(records, deviceId, mine.messageId))?.record).to.deep.equal(mine);
    expect(await ownRecordAndFields(records, deviceId, theirs.messageId)).to.equal(undefined);
    expect(await ownRecordAndFields(records, deviceId, 'x'.repeat(129))).to.equal(undefined);
    expect(records.reads).not.to.include('x'.repeat(129));

    const store = {
      get: async (d: string, id: string) => (id === mine.messageId ? { ...mine, deviceId: d } : undefined),
    };
    expect(await ownMessage({ messages: store }, deviceId, mine.messageId)).to.deep.include({
      messageId: mine.messageId,
    });
    expect(await ownMessage({ messages: store }, deviceId, 'x'.repeat(129))).to.equal(undefined);
    expect(await ownMessage({ messages: store }, deviceId, 'unknown')).to.equal(undefined);
  });
});
