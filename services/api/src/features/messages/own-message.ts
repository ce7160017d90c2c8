import type { MessageRecord } from '@mgw/contracts';
import type { MessageStore } from '@mgw/store';
import { readRecordAndFields, type AnyRecord } from './records.js';

/**
 * A message of the device, and only of the device: any other id (too long to be one, unknown, or
 * another device's) is undefined, so a route says 404 for each alike and never whose it is.
 */

/** The longest message id looked up; a longer one is no id of ours and costs no read. */
export const MAX_ID_LENGTH = 128;

/**
 * Message `id` of the device as GET /messages/:id reads it (one read of its record, whichever its
 * direction) and its record's fields; undefined for any other id.
 */
export async function ownRecordAndFields(
  s: Parameters<typeof readRecordAndFields>[0],
  deviceId: string,
  id: string,
): Promise<{ record: AnyRecord; fields: Record<string, string> } | undefined> {
  const { record, fields } =
    id.length <= MAX_ID_LENGTH
      ? await readRecordAndFields(s, deviceId, id)
      : { record: undefined, fields: {} };
  if (!record || record.deviceId !== deviceId) return undefined;
  return { record, fields };
}

/** The record of message `id` of the device; undefined for any other id. */
export async function ownMessage(
  s: { messages: Pick<MessageStore, 'get'> },
  deviceId: string,
  id: string,
): Promise<MessageRecord | undefined> {
  const record = id.length <= MAX_ID_LENGTH ? await s.messages.get(deviceId, id) : undefined;
  if (!record || record.deviceId !== deviceId) return undefined;
  return record;
}
