import type { MessagesQuery } from '@mgw/contracts';
import type { MessageIndex } from '@mgw/store';
import type { MessageDeps } from './get-message.js';
import { withContacts } from './record-contacts.js';
import { recordFromFields } from './records.js';
import { withRevisions } from './revised-record.js';

/**
 * Index entries read per round trip with a filter (it may skip many), and at most per request.
 * Without one each record read is listed (but for those gone), so a round trip reads only what
 * the page still lacks.
 */
const READ = 100;
const SCAN_BUDGET = 2000;

export interface MessagesPage {
  messages: Record<string, unknown>[];
  /** Pass as `cursor` for the next (older) page; absent on the last page. */
  nextCursor?: string;
}

/**
 * GET /messages: the device's messages newest first, through its message index (ids in the order
 * they were accepted or received), each read like GET /messages/:id, filtered by batch, status and
 * direction. A filtered page reads at most SCAN_BUDGET ids: it may come back short (even empty)
 * with a `nextCursor` to go on from.
 */
/** What GET /messages reads: the device's message index, and each record as GET /messages/:id reads it. */
export type ListMessagesDeps = Omit<MessageDeps, 'media' | 'poolBatches'> & {
  index: Pick<MessageIndex, 'page' | 'forget'>;
};

export async function listMessages(
  s: ListMessagesDeps,
  deviceId: string,
  q: MessagesQuery,
): Promise<MessagesPage> {
  const out: Record<string, unknown>[] = [];
  let before = q.cursor === undefined ? undefined : Number(q.cursor);
  let scanned = 0;
  /** The entries of `out` already given their `contact`. */
  let filled = 0;
  /** Each listed record's fields as read: its revisions and kinds are read from them. */
  const fieldsOf = new Map<string, Record<string, string>>();
  const filtered = q.direction !== undefined || q.batchId !== undefined || q.status !== undefined;
  for (;;) {
    const count = filtered ? READ : Math.min(READ, q.limit - out.length);
    // One round trip: the ids and their records (and whether older ids follow).
    const page = await s.index.page(deviceId, before, count);
    const entries = page.entries;
    const read = await Promise.all(entries.map((e) => recordFromFields(s, deviceId, e.messageId, e.fields)));
    const gone: string[] = [];
    let more = page.more;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      const record = read[i];
      before = entry.seq;
      scanned++;
      if (!record) {
        gone.push(entry.messageId);
        continue;
      }
      const direction = record.direction ?? 'outbound';
      if (q.direction && direction !== q.direction) continue;
      if (q.batchId && !('batchId' in record && record.batchId === q.batchId)) continue;
      // Edited and deleted ones as GET /messages/:id shows them (an inbound delete is a status).
      const full = await withRevisions(s, deviceId, record, entry.fields);
      if (q.status && full.status !== q.status) continue;
      out.push(full as unknown as Record<string, unknown>);
      fieldsOf.set(entry.messageId, entry.fields);
      if (out.length === q.limit) {
        more ||= i < entries.length - 1;
        break;
      }
    }
    await s.index.forget(deviceId, gone);
    await withContacts(s.redis, deviceId, out.slice(filled));
    filled = out.length;
    if (!more) return { messages: await withKinds(s, deviceId, out, fieldsOf) };
    if (out.length === q.limit || scanned >= SCAN_BUDGET) {
      return { messages: await withKinds(s, deviceId, out, fieldsOf), nextCursor: String(before) };
    }
  }
}

/** The page's messages with their message kind fields (as GET /messages/:id), read at once. */
async function withKinds(
  s: Pick<ListMessagesDeps, 'kinds'>,
  deviceId: string,
  messages: Record<string, unknown>[],
  fieldsOf: ReadonlyMap<string, Record<string, string>>,
): Promise<Record<string, unknown>[]> {
  const kinds = await Promise.all(
    messages.map((m) => s.kinds.read(deviceId, String(m.messageId), fieldsOf.get(String(m.messageId)))),
  );
  return messages.map((m, i) => ({ ...m, ...kinds[i] }));
}
