import type { MessagesQuery } from '@mgw/contracts';
import type { ApiServices } from '../api-services.js';
import { withContacts } from './contacts.js';
import { readRecordAndFields } from './records.js';
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
export async function listMessages(
  s: ApiServices,
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
    const entries = await s.index.before(deviceId, before, count);
    const read = await Promise.all(entries.map((e) => readRecordAndFields(s, deviceId, e.messageId)));
    const gone: string[] = [];
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      const { record, fields } = read[i]!;
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
      const full = await withRevisions(s, deviceId, record, fields);
      if (q.status && full.status !== q.status) continue;
      out.push(full as unknown as Record<string, unknown>);
      fieldsOf.set(entry.messageId, fields);
      if (out.length === q.limit) break;
    }
    await s.index.forget(deviceId, gone);
    await withContacts(s.redis, deviceId, out.slice(filled));
    filled = out.length;
    const exhausted = entries.length < count && out.length < q.limit;
    if (exhausted) return { messages: await withKinds(s, deviceId, out, fieldsOf) };
    if (out.length === q.limit || scanned >= SCAN_BUDGET) {
      const more = (await s.index.before(deviceId, before, 1)).length > 0;
      return {
        messages: await withKinds(s, deviceId, out, fieldsOf),
        ...(more ? { nextCursor: String(before) } : {}),
      };
    }
  }
}

/** The page's messages with their message kind fields (as GET /messages/:id), read at once. */
async function withKinds(
  s: ApiServices,
  deviceId: string,
  messages: Record<string, unknown>[],
  fieldsOf: ReadonlyMap<string, Record<string, string>>,
): Promise<Record<string, unknown>[]> {
  const kinds = await Promise.all(
    messages.map((m) => s.kinds.read(deviceId, String(m.messageId), fieldsOf.get(String(m.messageId)))),
  );
  return messages.map((m, i) => ({ ...m, ...kinds[i] }));
}
