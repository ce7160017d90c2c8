import type { MessageRecord } from '@mgw/contracts';
import type { InboundRecord } from '@mgw/store';
import type { ApiServices } from '../api-services.js';

/**
 * A message of the device as GET /messages/:id's shape starts: an inbound one opened (its text),
 * an outbound one as its record (or its queued job) says; undefined when it is gone. One read of
 * the record, whichever its direction.
 */
export async function readRecord(
  s: Pick<ApiServices, 'messages' | 'inbound'>,
  deviceId: string,
  messageId: string,
): Promise<MessageRecord | InboundRecord | undefined> {
  const h = await s.messages.fields(deviceId, messageId);
  return h.direction === 'inbound'
    ? s.inbound.fromFields(deviceId, messageId, h)
    : s.messages.fromFields(deviceId, messageId, h);
}
