import type { MessageRecord } from '@mgw/contracts';
import { Encryption, type InboundRecord, type InboundStore } from '@mgw/store';
import type { AnyRecord, RecordReads } from './records.js';

/**
 * TEST SUPPORT, not used by the API: a device's message records in memory, read as the message
 * stores read them — `fields` (one read of the record, whichever its direction) and the record
 * made from them by the store of its direction — for the fast tests of the message use cases.
 * A record's fields here are its direction and the record itself (JSON); a read answers a copy.
 */
export class MemoryRecords implements RecordReads {
  readonly encryption = Encryption.fromEnv();
  private readonly stored = new Map<string, AnyRecord>();
  private readonly extra = new Map<string, Record<string, string>>();
  /** The ids whose fields were read, in order. */
  readonly reads: string[] = [];

  /** A record as the sender or the accept leaves it, with fields of its own (`cloudMedia`). */
  put(record: AnyRecord, fields: Record<string, string> = {}): void {
    this.stored.set(`${record.deviceId}\n${record.messageId}`, record);
    this.extra.set(`${record.deviceId}\n${record.messageId}`, fields);
  }

  /** The record's fields as `MessageStore.fields` answers them (`{}`: no record). */
  fieldsOf(deviceId: string, messageId: string): Record<string, string> {
    const r = this.stored.get(`${deviceId}\n${messageId}`);
    const extra = this.extra.get(`${deviceId}\n${messageId}`);
    return r ? { direction: r.direction ?? 'outbound', record: JSON.stringify(r), ...extra } : {};
  }

  readonly messages: RecordReads['messages'] = {
    fields: async (deviceId, messageId) => {
      this.reads.push(messageId);
      return this.fieldsOf(deviceId, messageId);
    },
    fromFields: async (_deviceId, _messageId, h) =>
      h.record && h.direction !== 'inbound' ? (JSON.parse(h.record) as MessageRecord) : undefined,
  };

  readonly inbound: Pick<InboundStore, 'fromFields' | 'cloudMediaIdFromFields'> = {
    fromFields: (_deviceId, _messageId, h) =>
      h.record && h.direction === 'inbound' ? (JSON.parse(h.record) as InboundRecord) : undefined,
    // In memory the media id is kept as is (the store seals it).
    cloudMediaIdFromFields: (_deviceId, _messageId, h) =>
      h.direction === 'inbound' ? h.cloudMedia : undefined,
  };
}

let n = 0;
/** A message a contact wrote the device (`more` overrides). */
export function inboundRecord(deviceId: string, more: Partial<InboundRecord> = {}): InboundRecord {
  return {
    messageId: `in-${++n}`,
    deviceId,
    direction: 'inbound',
    status: 'received',
    platformMessageId: `WA-IN-${n}`,
    from: '15550001234',
    contact: { phone: '15550001234' },
    receivedAt: new Date().toISOString(),
    ...more,
  } as InboundRecord;
}

/** A message the device sent through the gateway (`more` overrides). */
export function sentRecord(deviceId: string, more: Partial<MessageRecord> = {}): MessageRecord {
  return {
    messageId: `out-${++n}`,
    deviceId,
    to: '15550001234',
    status: 'sent',
    kind: 'send',
    platformMessageId: `WA-OUT-${n}`,
    createdAt: new Date().toISOString(),
    sentAt: new Date().toISOString(),
    direction: 'outbound',
    ...more,
  };
}
