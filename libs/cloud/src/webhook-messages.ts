/**
 * The messages a contact writes to a Cloud API number, as the `messages` webhook brings them
 * (https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages
 * and its pages per type), read as hostile: anything of the wrong shape is left out, every string
 * bounded, and nothing throws.
 */
import { checkUsername } from '@mgw/contracts';
import {
  WEBHOOK_LIMITS,
  cut,
  digits,
  errorsOf,
  finite,
  isObject,
  list,
  str,
  timestampMs,
  wamid,
  type Obj,
  type WebhookError,
} from './webhook-read.js';

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
  /** `name.formatted_name` (else its first and last names); empty when the card has none. */
  name: string;
  phones: { phone: string; waId?: string; type?: string }[];
  /** Its first email address. */
  email?: string;
  /** Its organisation's company. */
  organization?: string;
}

export const REPLY_KINDS = ['button_reply', 'list_reply', 'nfm_reply', 'button'] as const;
export type WebhookReply = (typeof REPLY_KINDS)[number];

export const MEDIA_TYPES = ['image', 'video', 'audio', 'document', 'sticker'] as const;
export type WebhookMediaType = (typeof MEDIA_TYPES)[number];

/** A message a contact wrote to the number. */
export interface MessageEvent {
  kind: 'message';
  phoneNumberId: string;
  wamid: string;
  /**
   * The contact's wa_id (digits). Absent when Meta does not share their phone number (a user with
   * a username, 2026): then `userId` alone names them.
   */
  from?: string;
  /** The contact's business-scoped user ID (`from_user_id`, e.g. `US.13491208655302741918`). */
  userId?: string;
  timestampMs: number;
  /** Meta's type; one the gateway does not read (`interactive`, `order`, …) is kept as type only. */
  type: string;
  text?: string;
  /** The message it answers (`context.id`). */
  contextWamid?: string;
  /**
   * The group it was written in (`group_id`, the groups reference:
   * https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/group);
   * `from` is then its author.
   */
  groupId?: string;
  /** The name the contact gave WhatsApp (`contacts[].profile.name` of its wa_id). */
  profileName?: string;
  /**
   * The contact's WhatsApp username (`contacts[].profile.username`, 2026: only when they adopted
   * one), by WhatsApp's rules, lower case and without `@` (as the linked engine keeps usernames).
   */
  username?: string;
  media?: WebhookMedia & { type: WebhookMediaType };
  location?: WebhookLocation;
  contacts?: WebhookContactCard[];
  /**
   * A reply to the number's buttons, list or flow, whose `text` is the reply: the button's or the
   * row's title (`interactive.button_reply`, `interactive.list_reply`), a template's quick-reply
   * text (`button`), a flow's answers as JSON (`interactive.nfm_reply`).
   */
  reply?: WebhookReply;
  /** A reaction: the emoji (empty: removed) on the message it names. */
  reaction?: { wamid: string; emoji: string };
  errors?: WebhookError[];
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
    const names = isObject(c.name) ? c.name : {};
    const parts = [names.first_name, names.last_name].filter((n): n is string => typeof n === 'string');
    const name =
      cut(names.formatted_name, WEBHOOK_LIMITS.name) ??
      cut(parts.join(' ').trim(), WEBHOOK_LIMITS.name) ??
      '';
    const phones: WebhookContactCard['phones'] = [];
    for (const p of list(c.phones, WEBHOOK_LIMITS.phonesPerCard)) {
      if (!isObject(p)) continue;
      const phone = str(p.phone, WEBHOOK_LIMITS.small);
      if (!phone) continue;
      const waId = digits(p.wa_id);
      const type = str(p.type, WEBHOOK_LIMITS.small);
      phones.push({ phone, ...(waId ? { waId } : {}), ...(type ? { type } : {}) });
    }
    // A card with neither a name nor a number tells nothing (as a linked device's vCard reader).
    if (!name && phones.length === 0) continue;
    const email = isObject(list(c.emails, 1)[0]) ? cut((list(c.emails, 1)[0] as Obj).email, 254) : undefined;
    const organization = isObject(c.org) ? cut(c.org.company, WEBHOOK_LIMITS.name) : undefined;
    cards.push({ name, phones, ...(email ? { email } : {}), ...(organization ? { organization } : {}) });
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
      // A removed reaction comes with an empty emoji, or none at all (the reaction reference:
      // `emoji` is omitted when the user removed it); anything else must be a well-formed emoji.
      const given = m.reaction.emoji;
      const emoji = given === undefined || given === '' ? '' : cut(given, 32);
      return target && emoji !== undefined ? { reaction: { wamid: target, emoji } } : {};
    }
    case 'interactive':
      return isObject(m.interactive) ? interactiveReplyOf(m.interactive) : {};
    case 'button': {
      // A template's quick-reply button: its `text` (what the contact saw) and `payload` (ours).
      const text = isObject(m.button) ? cut(m.button.text, WEBHOOK_LIMITS.text) : undefined;
      return text !== undefined ? { text, reply: 'button' } : {};
    }
    default:
      return {};
  }
}

/**
 * A reply to the number's interactive message as text
 * (https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/interactive):
 * a button's or a list row's title; a flow's `response_json` (its answers, whole: cut JSON would
 * be no JSON, so an answer over the text bound leaves its `body` instead). Anything else (a call
 * permission, a product) carries no text.
 */
function interactiveReplyOf(interactive: Obj): Partial<MessageEvent> {
  const kind = interactive.type;
  const reply = typeof kind === 'string' ? interactive[kind] : undefined;
  if (!isObject(reply)) return {};
  if (kind === 'button_reply' || kind === 'list_reply') {
    const text = cut(reply.title, WEBHOOK_LIMITS.text);
    return text !== undefined ? { text, reply: kind } : {};
  }
  if (kind === 'nfm_reply') {
    const text = str(reply.response_json, WEBHOOK_LIMITS.text) ?? cut(reply.body, WEBHOOK_LIMITS.text);
    return text !== undefined ? { text, reply: kind } : {};
  }
  return {};
}

/**
 * A business-scoped user ID: a country code, a dot, an optional `ENT.` (a parent BSUID) and up to
 * 128 letters and digits (https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids).
 */
const USER_ID = /^[A-Z]{2}\.(?:ENT\.)?[A-Za-z0-9]{1,128}$/;
const userIdOf = (v: unknown): string | undefined =>
  typeof v === 'string' && USER_ID.test(v) ? v : undefined;

/** What `contacts[]` says of a contact: their profile name and username. */
export interface WebhookProfile {
  name?: string;
  username?: string;
}

/**
 * The profiles of a value's `contacts[]`, by `wa_id` (by `user_id` for a contact whose phone is
 * not shared): `profile.name` and `profile.username` (a username that breaks WhatsApp's rules is
 * left out).
 */
export function profilesOf(contacts: unknown): Map<string, WebhookProfile> {
  const profiles = new Map<string, WebhookProfile>();
  for (const c of list(contacts, WEBHOOK_LIMITS.itemsPerChange)) {
    if (!isObject(c) || !isObject(c.profile)) continue;
    const waId = digits(c.wa_id) ?? userIdOf(c.user_id);
    if (!waId) continue;
    const name = cut(c.profile.name, WEBHOOK_LIMITS.name);
    const given = str(c.profile.username, WEBHOOK_LIMITS.small);
    const checked = given ? checkUsername(given) : undefined;
    const username = checked?.ok ? checked.username : undefined;
    if (name || username)
      profiles.set(waId, { ...(name ? { name } : {}), ...(username ? { username } : {}) });
  }
  return profiles;
}

export function messageOf(
  phoneNumberId: string,
  m: unknown,
  profiles: Map<string, WebhookProfile>,
): MessageEvent | undefined {
  if (!isObject(m)) return undefined;
  const id = wamid(m.id);
  const from = digits(m.from);
  const userId = userIdOf(m.from_user_id);
  const at = timestampMs(m.timestamp);
  const type = str(m.type, 32);
  if (!id || (!from && !userId) || at === undefined || !type || !/^[a-z_]+$/.test(type)) return undefined;
  const contextWamid = isObject(m.context) ? wamid(m.context.id) : undefined;
  const groupId = m.group_id === undefined ? undefined : str(m.group_id, WEBHOOK_LIMITS.wamid);
  // A group message whose group cannot be read is no message of one-to-one chat either.
  if (m.group_id !== undefined && !groupId) return undefined;
  const { name: profileName, username } = profiles.get(from ?? userId!) ?? {};
  const errors = errorsOf(m.errors);
  return {
    kind: 'message',
    phoneNumberId,
    wamid: id,
    ...(from ? { from } : {}),
    ...(userId ? { userId } : {}),
    timestampMs: at,
    type,
    ...bodyOf(type, m),
    ...(contextWamid ? { contextWamid } : {}),
    ...(groupId ? { groupId } : {}),
    ...(profileName ? { profileName } : {}),
    ...(username ? { username } : {}),
    ...(errors ? { errors } : {}),
  };
}
