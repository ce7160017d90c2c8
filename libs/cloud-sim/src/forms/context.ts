/**
 * What every webhook form is built from: the business number, the user who writes (or is written
 * to), the moment, fresh ids, the media the user sends and the message a status or a reply names.
 * The forms themselves are pure (user-messages.ts, statuses.ts, envelopes.ts); the simulator
 * (sim.ts, `deliverForm`) gives them this context, signs what they build and delivers it.
 */
import type { NumberIdentity } from '../payloads.js';

/** Meta's reference of the `messages` webhook: every form cites its own page under it. */
export const MESSAGES_REFERENCE =
  'https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages';

/** The WhatsApp user of a form, as the 2026 reference names users (business-scoped user IDs). */
export interface FormUser {
  /** Their phone number's digits (`wa_id`, `from`). */
  waId: string;
  /** Their profile name (`contacts[].profile.name`). */
  name: string;
  /** Their business-scoped user ID (BSUID: `contacts[].user_id`, `from_user_id`), e.g. `US.1349…`. */
  userId: string;
  /** The username they adopted, when they did (`contacts[].profile.username`). */
  username?: string;
}

/** The webhook's description of a file the user sent (the bytes are fetched by its id). */
export interface FormMedia {
  id: string;
  mime_type: string;
  sha256: string;
  /** The 2026 reference adds the file's URL (the bearer token fetches it, as GET /{media-id}'s). */
  url: string;
}

/** The kinds of file a user sends, with the MIME type the simulator gives each. */
export const USER_MEDIA = {
  image: 'image/jpeg',
  video: 'video/mp4',
  audio: 'audio/mpeg',
  voice: 'audio/ogg; codecs=opus',
  document: 'application/pdf',
  sticker: 'image/webp',
} as const;
export type UserMediaKind = keyof typeof USER_MEDIA;

/** A message the business sent: what a status, a reaction or a reply names. */
export interface FormTarget {
  wamid: string;
  /** Who it went to (the status's `recipient_id`). */
  recipientId: string;
  /** The send's `biz_opaque_callback_data`, echoed in its statuses. */
  callbackData?: string;
}

export interface FormContext {
  number: NumberIdentity;
  user: FormUser;
  /** When the form happens (ms; its timestamps are this in Unix seconds). */
  at: number;
  /** A fresh WhatsApp message id (`wamid.…`). */
  wamid(): string;
  /** Stores a file the user sent, readable by the business's token (GET /{media-id}). */
  media(kind: UserMediaKind): FormMedia;
  /** The message the form answers or reports on (a fresh wamid to the user when none was given). */
  target: FormTarget;
}

/** One delivery's JSON body (`{ object: 'whatsapp_business_account', entry: [...] }`). */
export type WebhookBody = { object: 'whatsapp_business_account'; entry: WebhookEntry[] };
export type WebhookEntry = { id: string; time?: number; changes: WebhookChange[] };
export type WebhookChange = { value: Record<string, unknown>; field: string };

/** Meta's timestamps: Unix seconds, as a string of digits. */
export const seconds = (ms: number): string => String(Math.floor(ms / 1000));

/** The number's display digits, as `metadata.display_phone_number` and `context.from` give them. */
export const displayDigits = (number: NumberIdentity): string => number.displayPhoneNumber.replace(/\D/g, '');

/** A `messages` change of the number: `{ value: { messaging_product, metadata, ...value }, field }`. */
export function messagesChange(number: NumberIdentity, value: Record<string, unknown>): WebhookChange {
  return {
    value: {
      messaging_product: 'whatsapp',
      metadata: { display_phone_number: displayDigits(number), phone_number_id: number.id },
      ...value,
    },
    field: 'messages',
  };
}

/** A body of one entry of the number's WABA holding `changes`. */
export function body(number: NumberIdentity, ...changes: WebhookChange[]): WebhookBody {
  return { object: 'whatsapp_business_account', entry: [{ id: number.wabaId, changes }] };
}
