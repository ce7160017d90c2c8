import type { MessageRecord } from '@mgw/contracts';
import {
  historyOutboundOf,
  type HistoryOutboundRecord,
  type InboundRecord,
  type InboundStore,
  type MessageStore,
} from '@mgw/store';
import type { ApiServices } from '../../api-services.js';

export type AnyRecord = MessageRecord | InboundRecord | HistoryOutboundRecord;

/** What reading a record takes: its fields, and the record of either direction made from them. */
export type RecordReads = Pick<ApiServices, 'encryption'> & {
  messages: Pick<MessageStore, 'fields' | 'fromFields'>;
  inbound: Pick<InboundStore, 'fromFields'>;
};

/**
 * A message of the device as GET /messages/:id's shape starts — an inbound one opened (its text),
 * an outbound one as its record (or its queued job) says, one from the account's history with what
 * it said; no record when it is gone — and the record's fields as read (`{}` for a message still
 * queued), for readers of the same record (revisions, kinds, what a sent message said) not to
 * read it again. One read of the record, whichever its direction.
 */
export async function readRecordAndFields(
  s: RecordReads,
  deviceId: string,
  messageId: string,
): Promise<{ record?: AnyRecord; fields: Record<string, string> }> {
  const h = await s.messages.fields(deviceId, messageId);
  const record = await recordFromFields(s, deviceId, messageId, h);
  return { ...(record ? { record } : {}), fields: h };
}

/** The record of `readRecordAndFields`, from its fields as read (`{}`: a message still queued, or gone). */
export async function recordFromFields(
  s: RecordReads,
  deviceId: string,
  messageId: string,
  h: Record<string, string>,
): Promise<AnyRecord | undefined> {
  if (h.direction === 'inbound') return s.inbound.fromFields(deviceId, messageId, h);
  // One the account sent before the link (history sync): what it said is on its record.
  return (
    historyOutboundOf(s.encryption, deviceId, messageId, h) ?? s.messages.fromFields(deviceId, messageId, h)
  );
}
