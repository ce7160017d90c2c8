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

/** The statuses Meta reports of a message the number sent. */
export const WEBHOOK_STATUSES = ['sent', 'delivered', 'read', 'failed'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

/** An error of a `failed` status (or of an unsupported inbound message). */
export interface WebhookError {
  code: number;
  title: string;
  details?: string;
}

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

/** A media message's attachment as Meta describes it (the bytes are fetched by its id). */
export interface WebhookMedia {
  id: string;
  mimeType?: string;
  sha256?: string;
  caption?: string;
  filename?: string;
}

export interface WebhookLocation {
  latitude: number;
  longitude: number;
  name?: string;
  address?: string;
}

/** A contact card, as much of it as the gateway keeps: its name and its phone numbers. */
export interface WebhookContactCard {
  name: string;
  phones: { phone: string; waId?: string; type?: string }[];
}

export const MEDIA_TYPES = ['image', 'video', 'audio', 'document', 'sticker'] as const;
export type WebhookMediaType = (typeof MEDIA_TYPES)[number];

/** A message a contact wrote to the number. */
export interface MessageEvent {
  kind: 'message';
  phoneNumberId: string;
  wamid: string;
  /** The contact's wa_id (digits). */
  from: string;
  timestampMs: number;
  /** Meta's type; one the gateway does not read (`interactive`, `order`, …) is kept as type only. */
  type: string;
  text?: string;
  /** The message it answers (`context.id`). */
  contextWamid?: string;
  /** The name the contact gave WhatsApp (`contacts[].profile.name` of its wa_id). */
  profileName?: string;
  media?: WebhookMedia & { type: WebhookMediaType };
  location?: WebhookLocation;
  contacts?: WebhookContactCard[];
  /** A reaction: the emoji (empty: removed) on the message it names. */
  reaction?: { wamid: string; emoji: string };
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

/** Bounds of what one delivery may make the gateway read (Meta batches up to a few hundred). */
export const WEBHOOK_LIMITS = {
  entries: 100,
  changesPerEntry: 100,
  itemsPerChange: 1000,
  errorsPerItem: 10,
  contactCards: 20,
  phonesPerCard: 20,
  /** A wamid is `wamid.` and base64 of a few dozen bytes. */
  wamid: 256,
  /** `biz_opaque_callback_data`: Meta caps it at 512 characters. */
  callbackData: 512,
  text: 4096,
  caption: 1024,
  name: 256,
  title: 300,
  details: 1000,
  small: 128,
} as const;

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown, max: number): unknown[] => (Array.isArray(v) ? v.slice(0, max) : []);

/** Whether the string is well-formed UTF-16 (no lone surrogate, which no JSON writer of Meta's sends). */
const wellFormed = (s: string): boolean =>
  !/[\uD800-\uDFFF]/.test(s.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ''));

/** A string of at most `max` characters (longer, empty or ill-formed: undefined). */
function str(v: unknown, max: number): string | undefined {
  if (typeof v !== 'string' || v === '' || v.length > max || !wellFormed(v)) return undefined;
  return v;
}
/** A string cut to `max` characters (text a person wrote: kept, bounded). */
function cut(v: unknown, max: number): string | undefined {
  if (typeof v !== 'string' || v === '') return undefined;
  if (!wellFormed(v)) return undefined;
  // A cut through a surrogate pair would leave its first half alone: it goes too.
  return v.length <= max ? v : v.slice(0, /[\uD800-\uDBFF]/.test(v[max - 1]!) ? max - 1 : max);
}
const DIGITS = /^[0-9]{1,32}$/;
const digits = (v: unknown): string | undefined => (typeof v === 'string' && DIGITS.test(v) ? v : undefined);
const WAMID = /^[\x21-\x7e]+$/;
const wamid = (v: unknown): string | undefined => {
  const s = str(v, WEBHOOK_LIMITS.wamid);
  return s && WAMID.test(s) ? s : undefined;
};
/** Meta's timestamps are Unix seconds as a string of digits. */
function timestampMs(v: unknown): number | undefined {
  const s = typeof v === 'number' ? String(v) : v;
  if (typeof s !== 'string' || !/^[0-9]{1,12}$/.test(s)) return undefined;
  return Number(s) * 1000;
}
const finite = (v: unknown, min: number, max: number): number | undefined => {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) && n >= min && n <= max ? n : undefined;
};

function errorsOf(v: unknown): WebhookError[] | undefined {
  const out: WebhookError[] = [];
  for (const e of list(v, WEBHOOK_LIMITS.errorsPerItem)) {
    if (!isObject(e)) continue;
    const code = typeof e.code === 'number' && Number.isInteger(e.code) && e.code >= 0 ? e.code : undefined;
    if (code === undefined) continue;
    const data = isObject(e.error_data) ? e.error_data : {};
    const details = cut(data.details, WEBHOOK_LIMITS.details);
    out.push({
      code,
      title: cut(e.title, WEBHOOK_LIMITS.title) ?? cut(e.message, WEBHOOK_LIMITS.title) ?? '',
      ...(details !== undefined ? { details } : {}),
    });
  }
  return out.length ? out : undefined;
}

function statusOf(phoneNumberId: string, s: unknown): StatusEvent | undefined {
  if (!isObject(s)) return undefined;
  const id = wamid(s.id);
  const status = (WEBHOOK_STATUSES as readonly unknown[]).includes(s.status)
    ? (s.status as WebhookStatus)
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

function mediaOf(type: WebhookMediaType, v: unknown): MessageEvent['media'] {
  if (!isObject(v)) return undefined;
  const id = str(v.id, WEBHOOK_LIMITS.small);
  if (!id) return undefined;
  const mimeType = str(v.mime_type, WEBHOOK_LIMITS.small);
  const sha256 = str(v.sha256, WEBHOOK_LIMITS.small);
  const caption = cut(v.caption, WEBHOOK_LIMITS.caption);
  const filename = cut(v.filename, WEBHOOK_LIMITS.name);
  return {
    type,
    id,
    ...(mimeType ? { mimeType } : {}),
    ...(sha256 ? { sha256 } : {}),
    ...(caption ? { caption } : {}),
    ...(filename ? { filename } : {}),
  };
}

function locationOf(v: unknown): WebhookLocation | undefined {
  if (!isObject(v)) return undefined;
  const latitude = finite(v.latitude, -90, 90);
  const longitude = finite(v.longitude, -180, 180);
  if (latitude === undefined || longitude === undefined) return undefined;
  const name = cut(v.name, WEBHOOK_LIMITS.name);
  const address = cut(v.address, WEBHOOK_LIMITS.name);
  return { latitude, longitude, ...(name ? { name } : {}), ...(address ? { address } : {}) };
}

function cardsOf(v: unknown): WebhookContactCard[] | undefined {
  const cards: WebhookContactCard[] = [];
  for (const c of list(v, WEBHOOK_LIMITS.contactCards)) {
    if (!isObject(c)) continue;
    const name = isObject(c.name) ? cut(c.name.formatted_name, WEBHOOK_LIMITS.name) : undefined;
    if (!name) continue;
    const phones: WebhookContactCard['phones'] = [];
    for (const p of list(c.phones, WEBHOOK_LIMITS.phonesPerCard)) {
      if (!isObject(p)) continue;
      const phone = str(p.phone, WEBHOOK_LIMITS.small);
      if (!phone) continue;
      const waId = digits(p.wa_id);
      const type = str(p.type, WEBHOOK_LIMITS.small);
      phones.push({ phone, ...(waId ? { waId } : {}), ...(type ? { type } : {}) });
    }
    cards.push({ name, phones });
  }
  return cards.length ? cards : undefined;
}

/** The kind-specific part of a message: what its type carries, or nothing (its type alone). */
function bodyOf(type: string, m: Obj): Partial<MessageEvent> {
  switch (type) {
    case 'text': {
      const text = isObject(m.text) ? cut(m.text.body, WEBHOOK_LIMITS.text) : undefined;
      return text !== undefined ? { text } : {};
    }
    case 'image':
    case 'video':
    case 'audio':
    case 'document':
    case 'sticker': {
      const media = mediaOf(type, m[type]);
      return media ? { media } : {};
    }
    case 'location': {
      const location = locationOf(m.location);
      return location ? { location } : {};
    }
    case 'contacts': {
      const contacts = cardsOf(m.contacts);
      return contacts ? { contacts } : {};
    }
    case 'reaction': {
      if (!isObject(m.reaction)) return {};
      const target = wamid(m.reaction.message_id);
      // An empty emoji removes the reaction.
      const emoji = typeof m.reaction.emoji === 'string' ? (cut(m.reaction.emoji, 32) ?? '') : undefined;
      return target && emoji !== undefined ? { reaction: { wamid: target, emoji } } : {};
    }
    default:
      return {};
  }
}

function messageOf(phoneNumberId: string, m: unknown, names: Map<string, string>): MessageEvent | undefined {
  if (!isObject(m)) return undefined;
  const id = wamid(m.id);
  const from = digits(m.from);
  const at = timestampMs(m.timestamp);
  const type = str(m.type, 32);
  if (!id || !from || at === undefined || !type || !/^[a-z_]+$/.test(type)) return undefined;
  const contextWamid = isObject(m.context) ? wamid(m.context.id) : undefined;
  const profileName = names.get(from);
  const errors = errorsOf(m.errors);
  return {
    kind: 'message',
    phoneNumberId,
    wamid: id,
    from,
    timestampMs: at,
    type,
    ...bodyOf(type, m),
    ...(contextWamid ? { contextWamid } : {}),
    ...(profileName ? { profileName } : {}),
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
      const names = new Map<string, string>();
      for (const c of list(value.contacts, WEBHOOK_LIMITS.itemsPerChange)) {
        if (!isObject(c)) continue;
        const waId = digits(c.wa_id);
        const name = isObject(c.profile) ? cut(c.profile.name, WEBHOOK_LIMITS.name) : undefined;
        if (waId && name) names.set(waId, name);
      }
      for (const s of list(value.statuses, WEBHOOK_LIMITS.itemsPerChange)) {
        const event = statusOf(phoneNumberId, s);
        if (event) parsed.events.push(event);
        else parsed.skipped++;
      }
      for (const m of list(value.messages, WEBHOOK_LIMITS.itemsPerChange)) {
        const event = messageOf(phoneNumberId, m, names);
        if (event) parsed.events.push(event);
        else parsed.skipped++;
      }
    }
  }
  parsed.phoneNumberIds = [...numbers];
  return parsed;
}
