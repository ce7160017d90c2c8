/**
 * What Meta's webhooks bring to a Cloud API number, read defensively (docs/cloud-api.md "Inbound"):
 * the signature over the raw body (`X-Hub-Signature-256`,
 * https://developers.facebook.com/docs/graph-api/webhooks/getting-started), and the
 * `whatsapp_business_account` payload's statuses and messages
 * (https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages)
 * as typed events. The payload is the caller's only after its signature verified, yet it is read
 * as hostile all the same: anything of the wrong shape is skipped, every string is bounded, and
 * nothing here throws.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { messageOf, profilesOf, type MessageEvent } from './webhook-messages.js';
import {
  WEBHOOK_LIMITS,
  digits,
  errorsOf,
  isObject,
  list,
  str,
  timestampMs,
  wamid,
  type WebhookError,
} from './webhook-read.js';

/** The header Meta signs each delivery with: `sha256=<hex HMAC-SHA256 of the raw body>`. */
export const SIGNATURE_HEADER = 'x-hub-signature-256';

const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;

/**
 * Whether `header` is the app secret's HMAC-SHA256 of the exact bytes received. Compared in
 * constant time (the expected digest never leaks through timing); a missing or malformed header,
 * or an empty secret, is false.
 */
export function verifySignature(rawBody: Buffer, header: string | undefined, appSecret: string): boolean {
  if (typeof header !== 'string' || appSecret === '') return false;
  const match = SIGNATURE.exec(header.trim());
  if (!match) return false;
  const given = Buffer.from(match[1]!, 'hex');
  const expected = createHmac('sha256', appSecret).update(rawBody).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export * from './webhook-messages.js';
export { WEBHOOK_LIMITS, type WebhookError } from './webhook-read.js';

/** The statuses Meta reports of a message the number sent. */
export const WEBHOOK_STATUSES = ['sent', 'delivered', 'read', 'failed'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

/**
 * `played`: the contact played a voice message the number sent (the status reference's trigger
 * "Your voice message is played"). The contract has no played status: it is read, as a linked
 * device's played receipt is (libs/messenger `receiptsOf`: READ and above are read).
 */
const STATUS_OF_PLAYED: WebhookStatus = 'read';

/** A status of a message the number sent. */
export interface StatusEvent {
  kind: 'status';
  phoneNumberId: string;
  wamid: string;
  status: WebhookStatus;
  timestampMs: number;
  recipientId: string;
  /** The send's `biz_opaque_callback_data`: the gateway's messageId. */
  callbackData?: string;
  errors?: WebhookError[];
}

export type WebhookEvent = StatusEvent | MessageEvent;

/** What one delivery holds: its events, and how many entries were of a shape it could not read. */
export interface ParsedWebhook {
  events: WebhookEvent[];
  /** The phone-number ids the delivery names (each must be a cloud device of the gateway). */
  phoneNumberIds: string[];
  /** Statuses or messages skipped for their shape (counted, never thrown). */
  skipped: number;
}

function statusOf(phoneNumberId: string, s: unknown): StatusEvent | undefined {
  if (!isObject(s)) return undefined;
  const id = wamid(s.id);
  const status = (WEBHOOK_STATUSES as readonly unknown[]).includes(s.status)
    ? (s.status as WebhookStatus)
    : s.status === 'played'
      ? STATUS_OF_PLAYED
      : undefined;
  const at = timestampMs(s.timestamp);
  const recipientId = str(s.recipient_id, WEBHOOK_LIMITS.small);
  if (!id || !status || at === undefined || !recipientId) return undefined;
  const callbackData = str(s.biz_opaque_callback_data, WEBHOOK_LIMITS.callbackData);
  const errors = errorsOf(s.errors);
  return {
    kind: 'status',
    phoneNumberId,
    wamid: id,
    status,
    timestampMs: at,
    recipientId,
    ...(callbackData !== undefined ? { callbackData } : {}),
    ...(errors ? { errors } : {}),
  };
}

/**
 * The events of one delivery: each `entry[].changes[]` of field `messages` whose value names its
 * number (`metadata.phone_number_id`), its `statuses[]` and `messages[]` (with the writers' profile
 * names from `contacts[]`). Anything else — another object, another field, an item of the wrong
 * shape — is skipped; nothing throws.
 */
export function parseWebhook(body: unknown): ParsedWebhook {
  const parsed: ParsedWebhook = { events: [], phoneNumberIds: [], skipped: 0 };
  if (!isObject(body) || body.object !== 'whatsapp_business_account') return parsed;
  const numbers = new Set<string>();
  for (const entry of list(body.entry, WEBHOOK_LIMITS.entries)) {
    if (!isObject(entry)) continue;
    for (const change of list(entry.changes, WEBHOOK_LIMITS.changesPerEntry)) {
      if (!isObject(change) || !isObject(change.value)) continue;
      if (change.field !== undefined && change.field !== 'messages') continue;
      const value = change.value;
      const phoneNumberId = isObject(value.metadata) ? digits(value.metadata.phone_number_id) : undefined;
      if (!phoneNumberId) {
        parsed.skipped++;
        continue;
      }
      numbers.add(phoneNumberId);
      const profiles = profilesOf(value.contacts);
      for (const s of list(value.statuses, WEBHOOK_LIMITS.itemsPerChange)) {
        const event = statusOf(phoneNumberId, s);
        if (event) parsed.events.push(event);
        else parsed.skipped++;
      }
      for (const m of list(value.messages, WEBHOOK_LIMITS.itemsPerChange)) {
        const event = messageOf(phoneNumberId, m, profiles);
        if (event) parsed.events.push(event);
        else parsed.skipped++;
      }
    }
  }
  parsed.phoneNumberIds = [...numbers];
  return parsed;
}
