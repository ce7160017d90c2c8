/**
 * POST /send's body: who it goes to (numbers, groups, LIDs, personalised entries), its schema, and
 * the validation that spares joi the long lists and the commonest plain text.
 */
import type { ObjectSchema, StringSchema } from 'joi';
import { Joi, hasLoneSurrogate } from './text.js';
import { EITHER_TEXT_OR_ATTACHMENT } from './errors.js';
import { STRING_LIMITS } from './limits.js';
import { VAR_NAME_PATTERN, VARS_LIMITS, wellFormedEntryPhone, type RecipientVars } from './personalise.js';
import { parseSendAt, SEND_AT_RULE } from './send-at.js';
import { isSendAddress, SEND_ADDRESS_PATTERN, SEND_ADDRESS_RULE } from './contact.js';
import { usernameAddressSchema } from './usernames.js';
import { deleteSchema, editSchema, linkPreviewSchema, withRevisionRules } from './revisions.js';
import type { DeleteInput, EditInput } from './revisions.js';
import { MESSAGE_KINDS, messageKindsSchema, type MessageKindContent } from './message-kinds.js';
import { GROUP_JID_PATTERN, mentionsSchema } from './groups.js';
import { attachmentSchema, type SendAttachmentInput } from './attachment.js';
import { phone } from './request-fields.js';
import { isPlainObject, validate } from './validation.js';

/** A `to` address: a phone number or a LID (`<digits>@lid`, a contact known only by its LID). */
const sendAddress = Joi.string()
  .pattern(SEND_ADDRESS_PATTERN)
  .messages({ 'string.pattern.base': `{{#label}} ${SEND_ADDRESS_RULE}` });
/** A `to` string: a phone number, or a group's id (`<id>@g.us`). */
const phoneOrGroup = (phoneRule: StringSchema) =>
  Joi.alternatives().conditional(Joi.string().pattern(/@g\.us$/), {
    then: Joi.string()
      .max(64)
      .pattern(GROUP_JID_PATTERN)
      .messages({ 'string.pattern.base': '{{#label}} must be a group id such as 120363012345678901@g.us' }),
    // A WhatsApp username (`@alice.shop`, usernames.ts): resolved to its LID when the request is
    // accepted (docs/usernames.md).
    otherwise: Joi.alternatives().conditional(Joi.string().pattern(/^@/), {
      then: usernameAddressSchema,
      otherwise: phoneRule,
    }),
  });

/** A personalised list's entry of `to`: the number and the values of its placeholders. */
export interface RecipientInput {
  phone: string;
  vars?: RecipientVars;
}

export type SendTo = string | RecipientInput;

export interface SendBody extends MessageKindContent {
  to: SendTo | SendTo[];
  text?: string;
  attachment?: SendAttachmentInput;
  existingMessageId?: string;
  /** Scheduled send: ISO 8601 with an explicit offset, at most 30 days ahead (see send-at.ts). */
  sendAt?: string;
  /** Edit / delete one of our sent messages (see revisions.ts). */
  edit?: EditInput;
  delete?: DeleteInput;
  /** A text's preview of its first URL (default true; see link previews in docs/message-kinds.md). */
  linkPreview?: boolean;
  /** Phones or LIDs the text or caption mentions (see groups.ts). */
  mentions?: string[];
}

/** The phone number of a `to` entry. */
export const phoneOf = (entry: SendTo): string => (typeof entry === 'string' ? entry : entry.phone);

/**
 * Whether two `to` entries name the same number, for joi's `unique`: joi compares the entries as
 * they came, before (or whatever) its item rules said of them, so this must hold for anything —
 * `null`, a number, `{}`, an array. Entries without a number are never "the same": their own
 * problem is reported instead.
 */
function samePhone(a: unknown, b: unknown): boolean {
  const phone = phoneOfAny(a);
  return phone !== undefined && phone === phoneOfAny(b);
}

/** The number of a value that may be a `to` entry, or undefined for anything else. */
function phoneOfAny(entry: unknown): string | undefined {
  if (typeof entry === 'string') return entry;
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return undefined;
  const { phone } = entry as { phone?: unknown };
  return typeof phone === 'string' ? phone : undefined;
}

/** A `to` entry of a personalised list: `{ phone, vars }` (see personalise.ts). */
const recipient = Joi.object<RecipientInput>({
  phone: phone.required(),
  vars: Joi.object()
    .pattern(VAR_NAME_PATTERN, Joi.string().allow('').max(VARS_LIMITS.value))
    .max(VARS_LIMITS.count)
    .messages({ 'object.unknown': '{{#label}} is not a variable name: 1 to 32 letters, digits and _' }),
});

/** One `to` entry: a phone number or a recipient object (a conditional: its own problem is reported). */
const toEntry = (whenString: StringSchema) =>
  Joi.alternatives().conditional(Joi.object(), { then: recipient, otherwise: phoneOrGroup(whenString) });

/** `sendAt` of POST /send (and of the broadcasts: POST /status). */
export const sendAtSchema = Joi.string().custom((value: string, helpers) => {
  const at = parseSendAt(value);
  if (at === 'format')
    return helpers.message({
      custom: '{{#label}} must be an ISO 8601 date and time with an offset, e.g. 2030-01-31T09:00:00+01:00',
    });
  if (at === 'tooFar') return helpers.message({ custom: '{{#label}} may be at most 30 days ahead' });
  return value;
}, SEND_AT_RULE);

/** POST /send body; the recipient list size is configurable (MAX_RECIPIENTS). */
export function sendBodySchema(maxRecipients: number): ObjectSchema<SendBody> {
  const body = Joi.object<SendBody>({
    // A conditional (not .try) so a bad list reports the list's own problem, not "no type matched".
    to: Joi.alternatives()
      .conditional(Joi.array(), {
        then: Joi.array()
          .items(toEntry(sendAddress))
          .min(1)
          .max(maxRecipients)
          .unique(samePhone)
          .messages({
            'array.min': '"to" must list at least one phone number',
            'array.max': `"to" may list at most ${maxRecipients} phone numbers`,
            'array.unique': '"to" lists the same phone number twice',
          }),
        otherwise: toEntry(
          sendAddress.messages({
            'string.base': '"to" must be a phone number or a non-empty array of phone numbers',
          }),
        ),
      })
      .required(),
    text: Joi.string().min(1).max(STRING_LIMITS.text),
    attachment: attachmentSchema,
    existingMessageId: Joi.string().max(STRING_LIMITS.existingMessageId),
    sendAt: sendAtSchema,
    edit: editSchema,
    delete: deleteSchema,
    linkPreview: linkPreviewSchema,
    mentions: mentionsSchema,
  })
    .concat(messageKindsSchema)
    .or('text', 'attachment', 'edit', 'delete', ...MESSAGE_KINDS)
    .messages({ 'object.missing': EITHER_TEXT_OR_ATTACHMENT });
  return withRevisionRules(body);
}

/**
 * Validates a POST /send body exactly as `validate(sendBodySchema(max), value, { to: max })`, but
 * cheaply for long lists: joi spends ~4 µs per phone number (45 ms for 10,000, all at once) and
 * ~90 µs per personalised entry. When every entry of the list is well-formed (a number, or
 * `{ phone, vars }`), no number is there twice and the list fits — checked here in plain JS —
 * joi is given the body with the list cut to its first entry, which it judges the
 * same way as the whole list, and the list is put back. A list with any problem goes to joi whole,
 * for its exact details.
 */
export function validateSendBody(
  schema: ObjectSchema<SendBody>,
  value: unknown,
  maxRecipients: number,
): ReturnType<typeof validate<SendBody>> {
  const plain = plainTextSend(value);
  if (plain) return { value: plain };
  const to = isPlainObject(value) ? value.to : undefined;
  if (Array.isArray(to) && to.length > 1 && to.length <= maxRecipients && wellFormedAndDistinct(to)) {
    const result = validate(schema, { ...(value as object), to: [to[0]] }, { to: maxRecipients });
    return result.details ? result : { value: { ...result.value, to: [...(to as SendTo[])] } };
  }
  return validate(schema, value, { to: maxRecipients });
}

/**
 * The commonest body — one well-formed number and a text (and perhaps `existingMessageId`), all
 * within their limits, nothing else — is one joi would pass unchanged: checked here in plain JS
 * (joi costs more than the rest of accepting it). Anything else, valid or not, goes to joi.
 */
function plainTextSend(value: unknown): SendBody | undefined {
  if (!isPlainObject(value) || Object.getPrototypeOf(value) !== Object.prototype) return undefined;
  let fields = 0;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) return undefined;
    if (key !== 'to' && key !== 'text' && key !== 'existingMessageId') return undefined;
    fields++;
  }
  const { to, text, existingMessageId } = value;
  if (typeof to !== 'string' || !isSendAddress(to)) return undefined;
  if (typeof text !== 'string' || text.length < 1 || text.length > STRING_LIMITS.text) return undefined;
  // joi refuses a lone surrogate (text.ts)
  if (hasLoneSurrogate(text)) return undefined;
  if (existingMessageId === undefined) return fields === 2 ? { to, text } : undefined;
  if (typeof existingMessageId !== 'string' || existingMessageId.length > STRING_LIMITS.existingMessageId)
    return undefined;
  // joi refuses an empty string, and a lone surrogate
  if (existingMessageId.length === 0 || hasLoneSurrogate(existingMessageId)) return undefined;
  return { to, text, existingMessageId };
}

/** Every entry well-formed (numbers, or personalised entries: `wellFormedEntryPhone`), no number twice. */
function wellFormedAndDistinct(list: unknown[]): boolean {
  const phones = new Set<string>();
  for (const entry of list) {
    const phone = wellFormedEntryPhone(entry);
    if (phone === undefined || phones.has(phone)) return false;
    phones.add(phone);
  }
  return true;
}
