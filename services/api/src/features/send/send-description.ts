import { ERRORS, MAX_SEND_USERNAME_LOOKUPS, USERNAME_ERRORS } from '@mgw/contracts';
import { MESSAGE_KINDS_DESCRIPTION } from '../../openapi/message-kinds.js';

/**
 * POST /send's description in the OpenAPI document: what a request may hold beyond the contract,
 * each choice of ours marked (Choice), with the contract's error strings where they answer.
 */
export const SEND_DESCRIPTION =
  'Queues one message per recipient (202). With a list, `messageId` is the batch id and `messageIds` the message ids in `to` order.\n\n' +
  '**Personalised lists (Choice):** an entry of `to` may be `{ "phone", "vars": { "name": "Ana" } }` (mixable with plain numbers); `text` and the caption then have their `{{name}}` placeholders (exactly `{{` + letters, digits, `_` + `}}`; anything else is literal text) filled per recipient. Only a request with at least one object entry is personalised: a request of plain numbers is sent as written. Every placeholder must be in every recipient\'s `vars` (a plain number has none): otherwise 400 with one detail per recipient lacking one, path `["to", i, "vars", name]`. At most 20 variables of 1–32 characters each, values of at most 256 characters, 2,048 characters in all per recipient.\n\n' +
  '**Recipients:** `to` takes phone numbers (digits in international format, 7 to 15) and, for a contact the device knows only by its LID (it hides its number), `"<digits>@lid"` as its `contact.lid` shows it. **Choice:** a LID the device has never met (no message from it, no lookup or notification naming it) fails `unknown_contact` without asking WhatsApp. See docs/contacts-and-identities.md.\n\n' +
  '**Usernames (Choice):** `to` may name a WhatsApp username, `"@alice.shop"` (alone or in a list; WhatsApp\'s rules, else 400 with the rule broken; taken in any case, lower case). It is resolved to its LID when the request is accepted: from the device\'s map when the device resolved it (POST /contacts/username) or met it, else asked of WhatsApp without a PIN (at most ' +
  MAX_SEND_USERNAME_LOOKUPS +
  ' such per request, each one lookup of the daily cap). A username no account has, or guarded by a PIN the device never resolved it with, refuses the request with 422 (`' +
  USERNAME_ERRORS.notFound +
  '` / `' +
  USERNAME_ERRORS.pinRequired +
  "`, a detail per entry naming `username_not_found` or `username_pin_required`); 502/504 when WhatsApp's lookup failed. The message then goes to that LID (its record's `to`; `contact: { lid, username }`). Not through a pool token (400). See docs/usernames.md.\n\n" +
  '**Groups and mentions (Choice):** `to` may be a group id (`<id>@g.us`, see GET /groups), alone or in a list; a group message is one message for the daily cap and never a first contact, and fails `not_allowed_in_group` when the account is not a member or the group is announce-only and the account is not an admin. `mentions` (phones or LIDs, at most 100) become WhatsApp mentions of the text or caption; write `@<number>` in the text where each should show. A group message stays `sent` (WhatsApp reports receipts per member; they are not summed up).\n\n' +
  "**Scheduled sends (Choice):** `sendAt` (ISO 8601 with `Z` or an offset, at most 30 days ahead; 400 otherwise) delays every message of the request until then: they read `scheduled` with `sendAt` until it, then `queued` and on as usual. A `sendAt` in the past is sent now (no `sendAt` on the records). Scheduled messages count against the device's queue quota; a logout fails them `logged_out` like queued ones. POST /otp takes no `sendAt` (400).\n\n" +
  "**Edits and deletes (Choice):** instead of `text`/`attachment`, `edit: { messageId, text }` (new text, 1–65,536 characters) or `delete: { messageId }` names one of our messages (our `messageId`); `to` must be its recipient, as one number (400 otherwise); neither combines with `text`, `attachment`, `existingMessageId`, `sendAt` or the other (400). Each is a message of its own, queued and paced like a send (202, its own `messageId`). An edit needs a sent text of ours (`kind: send`, status sent/delivered/read; 409 otherwise) within WhatsApp's 15 minutes from its `sentAt` (409 `" +
  ERRORS.editWindowPassed +
  "` after, nothing sent); the record then shows `edits: [{ text, at }]` and its current `text` (sealed at rest). A delete for everyone needs a sent message within WhatsApp's 60 hours (2 days 12 hours; 409 `" +
  ERRORS.deleteWindowPassed +
  '` after); the record then ends `deleted` (final, `deletedAt`). A delete of a message still `queued`/`scheduled` takes it out of the queue: 200 `{ success, messageId, status: "deleted" }` and it is never sent; one whose send is starting answers 409. The window is checked again right before the edit or delete goes (it may have waited): past it, that message fails `revision_refused`. An unknown target: 404 `' +
  ERRORS.revisionTargetNotFound +
  '`.\n\n' +
  '**Link previews (Choice):** `linkPreview` (default `true`): a text with an http(s) URL carries a preview (title, description, a small JPEG) of its first URL, fetched by the gateway through the outbound guard (`ALLOWED_PRIVATE_HOSTS`; 3 s, 512 KB page, 64 KB image). A refused, slow or preview-less URL sends the text without a preview; `false` never fetches. OTPs never carry one.\n\n' +
  '**Typing (Choice):** while pacing is on, the contact sees "typing…" before a text or caption, for 0.6 s + 35 ms per character (at most 6 s, at most the pacing gap), filling the end of the gap (a list\'s first message on an idle device goes at once, untyped); never for OTPs, edits or deletes. Per device: the policy field `typing` (admin API).' +
  MESSAGE_KINDS_DESCRIPTION;
