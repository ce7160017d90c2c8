/**
 * Who a contact is. WhatsApp addresses a one-to-one chat by the contact's phone number
 * (`<digits>@s.whatsapp.net`) or by its LID (`<digits>@lid`, a per-account id that hides the
 * number); a contact that hides its number is only ever known by its LID. See
 * docs/contacts-and-identities.md.
 */

import { PHONE_PATTERN } from './limits.js';

/**
 * Who a contact is: its phone number (digits) when known, its LID (`<digits>@lid`) when known, and
 * its WhatsApp username (lower case, no `@`) when the device knows one for its LID (usernames.ts).
 */
export interface ContactIdentity {
  phone?: string;
  lid?: string;
  username?: string;
}

/** A LID as the API shows and accepts it: digits, `@lid` (what WhatsApp puts in the chat's JID). */
export const LID_PATTERN = /^[1-9]\d{0,19}@lid$/;

/** True for a `"<digits>@lid"` string (the only form of LID the API takes). */
export function isLid(value: string): boolean {
  return LID_PATTERN.test(value);
}

/** A `to` address: a phone number (digits, 7 to 15) or a contact's LID (`<digits>@lid`). */
export const SEND_ADDRESS_PATTERN = new RegExp(
  `^(?:${PHONE_PATTERN.source.slice(1, -1)}|${LID_PATTERN.source.slice(1, -1)})$`,
);

export function isSendAddress(value: string): boolean {
  return SEND_ADDRESS_PATTERN.test(value);
}

/** The rule `to` states in a 400's details. */
export const SEND_ADDRESS_RULE =
  "must be a phone number in international format: digits only, 7 to 15, or a contact's LID: <digits>@lid";
