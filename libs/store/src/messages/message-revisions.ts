import { randomUUID } from 'node:crypto';
import type { RedisClient } from '@mgw/common';
import {
  keys,
  type ContactIdentity,
  type EditEntry,
  type MessageDeletedEventData,
  type MessageEditedEventData,
} from '@mgw/contracts';
import { storageContext } from '../encryption/families.js';
import { eventSealContext } from '../events/event-publish.js';
import { storeScript } from '../lua.js';
import type { Sealer } from '../encryption/sealer.js';

/**
 * The field prefix of one edit of a record: `edit:<ms, 15 digits>:<WhatsApp id of the edit>`
 * (`lua/message-inbound-delete-4.lua` holds it too).
 */
const EDIT_FIELD = 'edit:';

/**
 * Appends one edit to a record that exists and is not deleted (each edit its own field, so two
 * edits never overwrite each other), makes its text the record's current one, emits
 * `message.edited`; an edit already recorded (WhatsApp redelivers) changes nothing
 * (`lua/message-edit-4.lua`). Returns 1 / 0.
 */
const EDIT = storeScript<number>('message-edit-4');

/**
 * A contact deleted a message it sent us: the inbound record reads `deleted`, its text, media
 * reference and edits (the fields starting with EDIT_FIELD) are dropped, `message.deleted` is
 * emitted once (`lua/message-inbound-delete-4.lua`).
 */
const INBOUND_DELETE = storeScript<number>('message-inbound-delete-4');

/** What an edit is recorded with. */
export interface EditInputRecord {
  deviceId: string;
  messageId: string;
  platformMessageId: string;
  direction: 'outbound' | 'inbound';
  /** The contact: the recipient as our record names it (outbound `to`), or the sender's phone (inbound). */
  phone?: string;
  /** The sender's LID (inbound): a contact may write, and revise, by its LID alone. */
  lid?: string;
  /** The WhatsApp id of the edit itself (its de-duplication key). */
  editId: string;
  text: string;
  at: Date;
}

/**
 * Edits and deletions of message records, ours and contacts' (issue 29). An edit's text is sealed
 * like every message text (each edit its own field, bound to its record and field), and the
 * record's current text (`text`) is the last edit's; the `message.edited` event is sealed until
 * delivered. Our own deletes are a status (`deleted`, MessageStore.markDeleted); a contact's
 * delete marks the inbound record `deletedAt` and drops its text.
 */
export class MessageRevisions {
  constructor(
    private readonly redis: RedisClient,
    private readonly sealer: Sealer,
    private readonly retentionSeconds: number,
  ) {}

  /** Records an edit and emits `message.edited`; false when the record is gone, deleted or has it. */
  async recordEdit(edit: EditInputRecord): Promise<boolean> {
    const key = keys.message(edit.deviceId, edit.messageId);
    const at = edit.at.toISOString();
    const field = `${EDIT_FIELD}${String(edit.at.getTime()).padStart(15, '0')}:${edit.editId}`;
    const entry: EditEntry = { text: edit.text, at };
    const eventId = randomUUID();
    const data: MessageEditedEventData = {
      deviceId: edit.deviceId,
      messageId: edit.messageId,
      platformMessageId: edit.platformMessageId,
      direction: edit.direction,
      ...(edit.direction === 'outbound'
        ? { to: edit.phone }
        : {
            ...(edit.phone ? { from: edit.phone } : {}),
            contact: { ...(edit.phone ? { phone: edit.phone } : {}), ...(edit.lid ? { lid: edit.lid } : {}) },
          }),
      text: edit.text,
      editedAt: at,
    };
    const written = await EDIT.run(
      this.redis,
      [key, keys.webhook(edit.deviceId), keys.eventOutbox(edit.deviceId), keys.eventLog(edit.deviceId)],
      [
        field,
        this.sealer.sealText(JSON.stringify(entry), storageContext(key, field)),
        this.sealer.sealText(edit.text, storageContext(key, 'text')),
        String(this.retentionSeconds),
        keys.eventsChannel(),
        edit.deviceId,
        eventId,
        at,
        this.sealer.sealText(JSON.stringify(data), eventSealContext(edit.deviceId, eventId)),
        edit.phone ?? '',
        edit.direction === 'outbound' ? 'to' : 'from',
        edit.lid ?? '',
      ],
    );
    return written === 1;
  }

  /** A contact deleted one of its messages to us: marks it and emits `message.deleted`. */
  async recordInboundDelete(
    deviceId: string,
    messageId: string,
    platformMessageId: string,
    contact: ContactIdentity,
    at: Date,
  ): Promise<boolean> {
    const deletedAt = at.toISOString();
    const data: MessageDeletedEventData = {
      deviceId,
      messageId,
      platformMessageId,
      direction: 'inbound',
      ...(contact.phone ? { from: contact.phone } : {}),
      contact,
      deletedAt,
    };
    const written = await INBOUND_DELETE.run(
      this.redis,
      [
        keys.message(deviceId, messageId),
        keys.webhook(deviceId),
        keys.eventOutbox(deviceId),
        keys.eventLog(deviceId),
      ],
      [
        deletedAt,
        keys.eventsChannel(),
        deviceId,
        randomUUID(),
        JSON.stringify(data),
        contact.phone ?? '',
        contact.lid ?? '',
      ],
    );
    return written === 1;
  }

  /** Our id of the inbound message with WhatsApp id `platformMessageId` (undefined: unknown or expired). */
  async inboundId(deviceId: string, platformMessageId: string): Promise<string | undefined> {
    return (await this.redis.get(keys.inboundByPlatformId(deviceId, platformMessageId))) ?? undefined;
  }

  /**
   * The sealed messageSecret of an inbound record, opened, with who wrote it (phone and LID JIDs,
   * as the record names them): what opens a secret-encrypted edit of it. Undefined when the record
   * kept none (gone, deleted, or a message that carried none).
   */
  async inboundSecret(
    deviceId: string,
    messageId: string,
  ): Promise<{ secret: Buffer; senderJids: string[] } | undefined> {
    const key = keys.message(deviceId, messageId);
    const [sealed, from, lid] = await this.redis.hmget(key, 'msgSecret', 'from', 'lid');
    if (!sealed) return undefined;
    const secret = Buffer.from(this.sealer.openText(sealed, storageContext(key, 'msgSecret')), 'base64');
    const senderJids = [...(from ? [`${from}@s.whatsapp.net`] : []), ...(lid ? [lid] : [])];
    return { secret, senderJids };
  }

  /**
   * What edits and deletes changed on a record: its edit history (oldest first) and current text
   * when edited, `deletedAt` when a contact deleted it (our own deletes are the record's status).
   * `record`: the record's fields as already read (`MessageStore.fields`), not read again.
   */
  async view(
    deviceId: string,
    messageId: string,
    record?: Record<string, string>,
  ): Promise<{ edits?: EditEntry[]; text?: string; deletedAt?: string }> {
    const key = keys.message(deviceId, messageId);
    const h = record ?? (await this.redis.hgetall(key));
    const fields = Object.keys(h)
      .filter((f) => f.startsWith(EDIT_FIELD))
      .sort();
    const edits = fields.map(
      (f) => JSON.parse(this.sealer.openText(h[f]!, storageContext(key, f))) as EditEntry,
    );
    return {
      ...(edits.length ? { edits, text: edits[edits.length - 1]!.text } : {}),
      ...(h.direction === 'inbound' && h.deletedAt ? { deletedAt: h.deletedAt } : {}),
    };
  }
}
