import { expect } from 'chai';
import type { MemoryRedis } from '../test-support.js';
import { deviceId, lid, messageFixture } from './message-fixture.js';
import { withContacts } from './record-contacts.js';

/**
 * Reading messages without an API: the records in memory, the device's phone <-> LID map in an
 * in-memory Redis, and the stores of what is shown beside a record answering as told.
 */
describe("withContacts: both identities of each record's contact, in one page's reads (an in-memory Redis)", () => {
  let redis: MemoryRedis;

  beforeEach(() => {
    ({ redis } = messageFixture());
  });

  it("When contacts are put on records, then a recipient or writer gets both identities the device's map knows, in one page's reads; one it does not know keeps what it had", async () => {
    const page: Record<string, unknown>[] = [
      { to: '15550001234' },
      { contact: { lid } },
      { to: '120363000000000001@g.us' },
      { contact: { phone: '15559999999' } },
    ];
    await withContacts(redis.client, deviceId, page);
    expect(page).to.deep.equal([
      { to: '15550001234', contact: { phone: '15550001234', lid } },
      { contact: { phone: '15550001234', lid } },
      { to: '120363000000000001@g.us' },
      { contact: { phone: '15559999999' } },
    ]);
    // One read of the map, and one of the usernames of the LIDs a phone led to.
    expect(redis.commands).to.deep.equal(['hmget', 'hmget']);
    await withContacts(redis.client, deviceId, []);
    expect(redis.commands, 'nothing read for no records').to.have.length(2);
  });
});
