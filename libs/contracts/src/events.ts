import type { GroupChat } from './groups.js';
import type { ConnectionStatus, MessageStatus } from './limits.js';
import type { ContactIdentity } from './contact.js';
import type { LocationInput } from './message-kinds.js';
import type { ContactCard } from './vcard.js';

/**
 * The events a device's webhook can receive (Standard Webhooks: each delivery carries
 * `{ type, timestamp, data }`, with `data.deviceId` always set). docs/events.md lists the payloads.
 */
export const EVENT_TYPES = [
  'message.sent',
  'message.delivered',
  'message.read',
  'message.failed',
  'message.received',
  'session.status',
  'batch.completed',
  'contact.opted_out',
  'contact.opted_in',
  'batch.paused',
  'batch.resumed',
  'batch.cancelled',
  'message.edited',
  'message.deleted',
  'message.reaction',
  'poll.vote',
  'batch.recipients_moved',
  // retry receipts: the recipient's phone never decrypted the message (message-retry-5.lua)
  'message.undecryptable',
  // a contact's presence: online / offline (last seen), typing or recording (docs/account.md)
  'presence.update',
  // status updates (docs/broadcasts.md): a viewer opened ours; a contact posted one
  'status.viewed',
  'status.received',
  // channels (docs/broadcasts.md#channels): a post of a channel the account follows
  'channel.message',
  // calls (chats.ts): a contact calls; the call ends unanswered, or after it was answered elsewhere
  'call.received',
  'call.missed',
  'call.ended',
  // a group's subject, description, settings or members changed (docs/groups.md)
  'group.updated',
  // WhatsApp Business labels, from app-state sync (docs/labels.md)
  'label.edited',
  'label.association',
  // a chat archived, pinned or muted (or undone) — on the phone, another device or through the API
  'chat.updated',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** `data` of message.sent / delivered / read / failed (the time field is the status's own). */
export interface MessageEventData {
  deviceId: string;
  messageId: string;
  batchId?: string;
  /** The recipient as the request named it: a phone number or a LID (`<digits>@lid`). */
  to: string;
  /** The recipient's phone and LID as far as the device knows them. */
  contact?: ContactIdentity;
  platformMessageId: string;
  status: Exclude<MessageStatus, 'queued'>;
  error?: string;
  sentAt?: string;
  deliveredAt?: string;
  readAt?: string;
  failedAt?: string;
}

/**
 * `data` of message.undecryptable: the recipient asked for the message again (retry receipts)
 * MESSAGE_RETRY_MAX times and no receipt said it arrived; its status stays `sent`.
 */
export interface MessageUndecryptableEventData {
  deviceId: string;
  messageId: string;
  batchId?: string;
  to: string;
  contact?: ContactIdentity;
  platformMessageId: string;
  status: 'sent';
  /** The asks so far (the bound) and the re-sends before this ask's. */
  retries: { asked: number; answered: number };
  undecryptableAt: string;
}

/** `data` of session.status; other fields (e.g. a restriction's `reason` and `until`) may be added by the publisher. */
export interface SessionStatusEventData {
  deviceId: string;
  status: ConnectionStatus | (string & {});
  reason?: string;
  phone?: string;
  name?: string;
  [extra: string]: unknown;
}

/** `data` of batch.completed: every message of a batch left the queue (sent or failed). */
export interface BatchCompletedEventData {
  deviceId: string;
  batchId: string;
  total: number;
  /** No `scheduled`: nothing of the batch waits any more. */
  counts: Omit<BatchCounts, 'scheduled'>;
  completedAt: string;
}

/** `data` of batch.paused / batch.resumed / batch.cancelled: the batch's control changed. */
export interface BatchControlEventData {
  deviceId: string;
  batchId: string;
  /** The batch's state after the change. */
  state: 'paused' | 'active' | 'cancelled';
  /** `pausedAt`, `resumedAt` or `cancelledAt` (one of them, the event's own). */
  pausedAt?: string;
  resumedAt?: string;
  cancelledAt?: string;
}

/** A batch's state: sending, paused, cancelled, or every message left the queue. */
export const BATCH_STATES = ['active', 'paused', 'cancelled', 'completed'] as const;
export type BatchState = (typeof BATCH_STATES)[number];

/** A batch's messages by status; the counts always sum to `total`. */
export interface BatchCounts {
  /** Scheduled sends not due yet (see MESSAGE_STATUSES). */
  scheduled: number;
  queued: number;
  sent: number;
  delivered: number;
  read: number;
  failed: number;
  deleted: number;
}

/** GET /batches/:batchId `data`. */
export interface BatchRecord {
  batchId: string;
  total: number;
  /** Precedence: cancelled, then completed, then paused, else active. */
  state: BatchState;
  /** By status (summing to `total`), plus `held`: how many of the `queued` ones are held now. */
  counts: BatchCounts & { held: number };
  createdAt: string;
  /** A scheduled batch: when it is due. */
  sendAt?: string;
  completedAt?: string;
  pausedAt?: string;
  cancelledAt?: string;
}

/** GET /batches/:batchId `data` of a batch sent through a pool: the batch whole, and each device's part. */
export interface PoolBatchRecord extends BatchRecord {
  poolId: string;
  /** Each device that held part of the batch, with its own counts (a message moved counts where it went). */
  devices: { deviceId: string; total: number; counts: BatchCounts & { held: number } }[];
  /** Messages moved from a device that dropped out of the pool to another. */
  moved: number;
}

/**
 * One webhook delivery: the event as emitted (an outbox entry, or a retry record), so every
 * attempt sends the same `webhook-id` and body.
 */
export interface WebhookJobData {
  /** The Standard Webhooks `webhook-id`: stable per event, the receiver's dedupe key. */
  id: string;
  type: EventType;
  /** When the event happened (ISO 8601), the body's `timestamp`. */
  timestamp: string;
  /** The event's `data` as JSON text — sealed (libs/store encryption) when `sealed`. */
  data: string;
  /** The data holds message text: it is sealed at rest and opened only to be sent. */
  sealed?: boolean;
  /** The W3C traceparent of the message it is about (tracing on): its delivery continues that trace. */
  traceparent?: string;
}

/** `data` of message.received. */
export interface MessageReceivedEventData {
  deviceId: string;
  messageId: string;
  platformMessageId: string;
  /** The contact's phone number (digits); absent when the contact is known only by its LID. */
  from?: string;
  /** Who wrote: its phone and/or LID (always at least one). */
  contact: ContactIdentity;
  text?: string;
  /**
   * The attachment; with `mediaId`, `url` and `urlExpiresAt` when the device keeps this kind on
   * arrival in the media store (docs/media.md): the pre-signed URL fetches the file.
   */
  attachment?: {
    type: string;
    mimeType: string;
    fileName?: string;
    size: number;
    mediaId?: string;
    url?: string;
    urlExpiresAt?: string;
    /** Of a type the device keeps, but not kept: why (docs/media.md). */
    mediaError?: string;
  };
  replyTo?: string;
  /** A location the contact shared (message kinds). */
  location?: LocationInput;
  /** Contact cards the contact shared, read from their vCards (message kinds). */
  contacts?: ContactCard[];
  /** A group message: the group. */
  chat?: GroupChat;
  /** Whom the text or caption mentions: phones (digits) or LIDs (`<digits>@lid`). */
  mentions?: string[];
  receivedAt: string;
}

/**
 * `data` of contact.opted_out / contact.opted_in: a number joined or left the device's
 * suppression list, by a keyword the contact wrote (`source: "keyword"`) or through the admin API.
 */
export interface ContactOptEventData {
  deviceId: string;
  /** The list entry: the number, or the `<digits>@lid` of a contact known by its LID. */
  phone: string;
  /** The contact's identities as the device knows them (an opt-out by either covers both). */
  contact?: ContactIdentity;
  source: 'keyword' | 'admin';
  at: string;
}

/**
 * `data` of message.edited: one of our texts was edited (`direction: "outbound"`, `to` the
 * recipient, `messageId` ours) or a contact edited a text it sent us (`"inbound"`, `from` the
 * contact, the inbound message's id). Sealed at rest: it holds text.
 */
export interface MessageEditedEventData {
  deviceId: string;
  messageId: string;
  platformMessageId: string;
  direction: 'outbound' | 'inbound';
  to?: string;
  from?: string;
  /** Inbound: the contact who wrote (phone and/or LID; a group's member), as message.received names it. */
  contact?: ContactIdentity;
  text: string;
  editedAt: string;
}

/**
 * `data` of message.deleted: one of our messages was deleted for everyone (or taken out of the
 * queue unsent; `status: "deleted"`, like the other message.<status> events), or a contact deleted
 * one it sent us (`direction: "inbound"`, `from`).
 */
export interface MessageDeletedEventData {
  deviceId: string;
  messageId: string;
  platformMessageId: string;
  direction: 'outbound' | 'inbound';
  to?: string;
  from?: string;
  /** Inbound: the contact who wrote (phone and/or LID; a group's member), as message.received names it. */
  contact?: ContactIdentity;
  status?: 'deleted';
  batchId?: string;
  deletedAt: string;
}
