import type { MessageRecord } from '@mgw/contracts';
import { historyOutboundOf, type HistoryOutboundRecord, type InboundRecord } from '@mgw/store';
import type { ApiServices } from '../api-services.js';

/**
 * A message of the device as GET /messages/:id's shape starts: an inbound one opened (its text),
 * an outbound one as its record (or its queued job) says, one from the account's history with
 * what it said; undefined when it is gone. One read of the record, whichever its direction.
 */
export async function readRecord(
  s: Pick<ApiServices, 'messages' | 'inbound' | 'encryption'>,
  deviceId: string,
  messageId: string,
): Promise<MessageRecord | InboundRecord | HistoryOutboundRecord | undefined> {
  const h = await s.messages.fields(deviceId, messageId);
  if (h.direction === 'inbound') return s.inbound.fromFields(deviceId, messageId, h);
  // One the account sent before the link (history sync): what it said is on its record.
  return (
    historyOutboundOf(s.encryption, deviceId, messageId, h) ?? s.messages.fromFields(deviceId, messageId, h)
  );
}
