import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import type { MediaObject, MessagesQuery } from '@mgw/contracts';
import { MemoryRedis } from '../test-support.js';
import { getMessage, type MessageDeps } from './get-message.js';
import { listMessages, type ListMessagesDeps } from './list-messages.js';
import { MemoryRecords, inboundRecord, sentRecord } from './memory-records.js';
import { ownMessage, ownRecordAndFields } from './own-message.js';
import { withContacts } from './record-contacts.js';
import { readRecordAndFields, recordFromFields } from './records.js';
import { withRevisions } from './revised-record.js';

/**
 * Reading messages (GET /messages/:id, GET /messages) without an API: the records in memory, the
 * device's phone <-> LID map in an in-memory Redis (as the sender keeps it: `p:<phone>` -> LID,
 * `l:<lid>` -> phone), and the stores of what is shown beside a record (edits, kinds, media, a
 * pool's owners) answering as told.
 */
describe('Reading messages: getMessage, listMessages and what they show (in-memory records and stores)', () => {
  const deviceId = 'rm-1';
  const lid = '998877665544@lid';
  let records: MemoryRecords;
  let redis: MemoryRedis;
  let edits: Map<string, { edits?: { text: string; at: string }[]; text?: string; deletedAt?: string }>;
  let objects: Map<string, MediaObject>;
  let owners: Map<string, string>;
  let deps: MessageDeps;

  beforeEach(() => {
    records = new MemoryRecords();
    redis = new MemoryRedis();
    redis.hash(keys.contactIdentities(deviceId), {
      'p:15550001234': '998877665544',
      'l:998877665544': '15550001234',
    });
    edits = new Map();
    objects = new Map();
    owners = new Map();
    deps = {
      messages: records.messages,
      inbound: records.inbound,
      encryption: records.encryption,
      redis: redis.client,
      revisions: { view: async (_d, id) => edits.get(id) ?? {} },
      kinds: { read: async (_d, id, h) => (h?.record && id.startsWith('out') ? {} : {}) },
      media: { show: async (d, id) => (objects.get(id)?.deviceId === d ? objects.get(id) : undefined) },
      poolBatches: { owner: async (poolId, id) => owners.get(`${poolId}\n${id}`) },
    };
  });

  describe('a record of the device', () => {
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

    it('When a record was edited or deleted, then withRevisions shows its edits and current text, or deleted without its text', async () => {
      const record = { messageId: 'r-1', status: 'sent', text: 'first' };
      edits.set('r-1', { edits: [{ text: 'second', at: '2026-01-01T00:00:00.000Z' }], text: 'second' });
      edits.set('r-2', { deletedAt: '2026-01-02T00:00:00.000Z' });
      expect(await withRevisions(deps, deviceId, record)).to.deep.equal({
        ...record,
        edits: [{ text: 'second', at: '2026-01-01T00:00:00.000Z' }],
        text: 'second',
      });
      expect(await withRevisions(deps, deviceId, { ...record, messageId: 'r-2' })).to.deep.equal({
        messageId: 'r-2',
        status: 'deleted',
        deletedAt: '2026-01-02T00:00:00.000Z',
        text: undefined,
      });
      expect(await withRevisions(deps, deviceId, { ...record, messageId: 'r-3' })).to.deep.equal({
        ...record,
        messageId: 'r-3',
      });
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

  describe('getMessage', () => {
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
  });

  describe('listMessages', () => {
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
});
