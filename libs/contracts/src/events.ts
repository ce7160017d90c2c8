import type { ConnectionStatus, MessageStatus } from './limits.js';

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
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** `data` of message.sent / delivered / read / failed (the time field is the status's own). */
export interface MessageEventData {
  deviceId: string;
  messageId: string;
  batchId?: string;
  to: string;
  platformMessageId: string;
  status: Exclude<MessageStatus, 'queued'>;
  error?: string;
  sentAt?: string;
  deliveredAt?: string;
  readAt?: string;
  failedAt?: string;
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

/** `data` of batch.completed: every message of a list left the queue (sent or failed). */
export interface BatchCompletedEventData {
  deviceId: string;
  batchId: string;
  total: number;
  /** No `scheduled`: nothing of the list waits any more. */
  counts: Omit<BatchCounts, 'scheduled'>;
  completedAt: string;
}

/** `data` of batch.paused / batch.resumed / batch.cancelled: the list's control changed. */
export interface BatchControlEventData {
  deviceId: string;
  batchId: string;
  /** The list's state after the change. */
  state: 'paused' | 'active' | 'cancelled';
  /** `pausedAt`, `resumedAt` or `cancelledAt` (one of them, the event's own). */
  pausedAt?: string;
  resumedAt?: string;
  cancelledAt?: string;
}

/** A list's state: sending, paused, cancelled, or every message left the queue. */
export const BATCH_STATES = ['active', 'paused', 'cancelled', 'completed'] as const;
export type BatchState = (typeof BATCH_STATES)[number];

/** A list's messages by status; the counts always sum to `total`. */
export interface BatchCounts {
  /** Scheduled sends not due yet (see MESSAGE_STATUSES). */
  scheduled: number;
  queued: number;
  sent: number;
  delivered: number;
  read: number;
  failed: number;
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
  /** A scheduled list: when it is due. */
  sendAt?: string;
  completedAt?: string;
  pausedAt?: string;
  cancelledAt?: string;
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
}

/** `data` of message.received. */
export interface MessageReceivedEventData {
  deviceId: string;
  messageId: string;
  platformMessageId: string;
  from: string;
  text?: string;
  attachment?: { type: string; mimeType: string; fileName?: string; size: number };
  replyTo?: string;
  receivedAt: string;
}

/**
 * `data` of contact.opted_out / contact.opted_in: a number joined or left the device's
 * suppression list, by a keyword the contact wrote (`source: "keyword"`) or through the admin API.
 */
export interface ContactOptEventData {
  deviceId: string;
  phone: string;
  source: 'keyword' | 'admin';
  at: string;
}
