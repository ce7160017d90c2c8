import { expect } from 'chai';
import type { MessagesQuery } from '@mgw/contracts';
import type { MessageDeps } from './get-message.js';
import { inboundRecord, sentRecord, type MemoryRecords } from './memory-records.js';
import { deviceId, lid, messageFixture, type MessageFixture } from './message-fixture.js';
import { listMessages, type ListMessagesDeps } from './list-messages.js';

/**
 * Reading messages without an API: the records in memory, the device's phone <-> LID map in an
 * in-memory Redis, and the stores of what is shown beside a record answering as told.
 */
describe("listMessages: the device's messages newest first, filtered and paged (in-memory records and index)", () => {
  let records: MemoryRecords;
  let edits: MessageFixture['edits'];
  let deps: MessageDeps;

  beforeEach(() => {
    ({ records, edits, deps } = messageFixture());
  });

  /** The device's index: its ids newest first (seq descending), each page read with its records' fields. */
  let index: string[];
  let forgotten: string[];
  let pages: number;
  let listDeps: ListMessagesDeps;
  beforeEach(() => {
    index = [];
    forgotten = [];
    pages = 0;
    listDeps = {
      ...deps,
      index: {
        page: async (d, before, count) => {
          pages++;
          const older = index
            .map((messageId, seq) => ({ messageId, seq: seq + 1 }))
            .reverse()
            .filter((e) => before === undefined || e.seq < before);
          const entries = older
            .slice(0, count)
            .map((e) => ({ ...e, fields: records.fieldsOf(d, e.messageId) }));
          return { entries, more: older.length > count };
        },
        forget: async (_d, ids) => void forgotten.push(...ids),
      },
    };
  });
  const q = (more: Partial<MessagesQuery> = {}) => ({ limit: 50, ...more }) as MessagesQuery;

  it('When the device has messages, then they come newest first with their contacts, paged by cursor; an id whose record is gone is skipped and dropped from the index', async () => {
    const a = sentRecord(deviceId);
    const b = inboundRecord(deviceId, { text: 'b' });
    const c = sentRecord(deviceId, { status: 'delivered' });
    for (const r of [a, b, c]) records.put(r);
    index.push(a.messageId, 'expired-one', b.messageId, c.messageId);

    const first = await listMessages(listDeps, deviceId, q({ limit: 2 }));
    expect(first.messages.map((m) => m.messageId)).to.deep.equal([c.messageId, b.messageId]);
    expect(first.messages[0]!.contact).to.deep.equal({ phone: '15550001234', lid });
    expect(first.nextCursor).to.equal('3');
    const second = await listMessages(listDeps, deviceId, q({ limit: 2, cursor: first.nextCursor }));
    expect(second.messages.map((m) => m.messageId)).to.deep.equal([a.messageId]);
    expect(second.nextCursor).to.equal(undefined);
    expect(forgotten).to.deep.equal(['expired-one']);
  });

  it('When a filter is given, then only the messages of that direction, list or status (an edited or deleted one as it reads now) are listed', async () => {
    const inList = sentRecord(deviceId, { batchId: 'b-1' });
    const deleted = sentRecord(deviceId, { batchId: 'b-1' });
    const other = inboundRecord(deviceId);
    for (const r of [inList, deleted, other]) records.put(r);
    index.push(inList.messageId, deleted.messageId, other.messageId);
    edits.set(deleted.messageId, { deletedAt: new Date().toISOString() });

    const ids = async (filter: Partial<MessagesQuery>) =>
      (await listMessages(listDeps, deviceId, q(filter))).messages.map((m) => m.messageId);
    expect(await ids({ direction: 'inbound' })).to.deep.equal([other.messageId]);
    expect(await ids({ batchId: 'b-1' })).to.deep.equal([deleted.messageId, inList.messageId]);
    expect(await ids({ status: 'deleted' })).to.deep.equal([deleted.messageId]);
    expect(await ids({ direction: 'outbound', status: 'sent' })).to.deep.equal([inList.messageId]);
  });

  it('When a filter skips many, then a page reads at most its budget of ids and answers short with a cursor to go on from', async () => {
    for (let i = 0; i < 2100; i++) {
      const r = sentRecord(deviceId);
      records.put(r);
      index.push(r.messageId);
    }
    const page = await listMessages(listDeps, deviceId, q({ direction: 'inbound' }));
    expect(page.messages).to.deep.equal([]);
    expect(page.nextCursor).to.equal(String(2100 - 2000 + 1));
    expect(pages).to.equal(20);
  });
});
