import type { ObjectSchema, Schema, StringSchema, ValidationError } from 'joi';
import { Joi, hasLoneSurrogate } from './text.js';
import { EITHER_TEXT_OR_ATTACHMENT } from './errors.js';
import {
  ATTACHMENT_TYPES,
  CONNECT_METHODS,
  MESSAGE_STATUSES,
  OTP_LANGUAGES,
  PHONE_PATTERN,
  STRING_LIMITS,
  MAX_CONTACT_CHECK,
  type AttachmentType,
} from './limits.js';
import type { OtpLanguage, ConnectMethod } from './limits.js';
import { EVENT_TYPES, type EventType } from './events.js';
import { VAR_NAME_PATTERN, VARS_LIMITS, wellFormedEntryPhone, type RecipientVars } from './personalise.js';
import { parseSendAt, SEND_AT_RULE } from './send-at.js';
import { isSendAddress, SEND_ADDRESS_PATTERN, SEND_ADDRESS_RULE } from './contact.js';
import { deleteSchema, editSchema, linkPreviewSchema, withRevisionRules } from './revisions.js';
import type { DeleteInput, EditInput } from './revisions.js';
import { MESSAGE_KINDS, messageKindsSchema, type MessageKindContent } from './message-kinds.js';
import { GROUP_JID_PATTERN, mentionsSchema } from './groups.js';
import { MEDIA_ID_PATTERN } from './media.js';

/** One entry of the spec's validation `details`. */
export interface ValidationDetail {
  path: (string | number)[];
  message: string;
}

const phone = Joi.string().pattern(PHONE_PATTERN).messages({
  'string.pattern.base': '{{#label}} must be a phone number in international format: digits only, 7 to 15',
});

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
    otherwise: phoneRule,
  });

/** `?token=` is the spec's alternative to the Bearer header, so every query may carry it. */
const token = Joi.string();

/** The base64 alphabet, then at most two `=`: one greedy character class, safe on any length. */
const BASE64_TEXT = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Standard base64, padding optional: what joi's `.base64({ paddingRequired: false })` accepts.
 * joi's rule tests one regex of repeated 4-character groups over the whole value, and on a
 * ~10 MB attachment that can overflow V8's regexp backtracking stack (seen in CI: a RangeError
 * from joi, answered 500, for a valid attachment of exactly 10 MB).
 */
export function isBase64(value: string): boolean {
  if (!BASE64_TEXT.test(value)) return false;
  const padding = value.endsWith('==') ? 2 : value.endsWith('=') ? 1 : 0;
  const rest = (value.length - padding) % 4;
  return padding === 0 ? rest !== 1 : padding === 1 ? rest === 3 : rest === 2;
}

/** How the schemas name the `isBase64` rule (its `custom` rule's description; see the OpenAPI document). */
export const BASE64_RULE = 'base64, padding optional';

/** An attachment of POST /send (and of a channel post): a URL, base64 or an uploaded media id. */
export const attachmentSchema = Joi.object({
  type: Joi.string()
    .valid(...ATTACHMENT_TYPES)
    .required(),
  // The length first: a multi-megabyte "URL" is refused before the URI rule reads it.
  url: Joi.string()
    .max(STRING_LIMITS.url)
    .uri({ scheme: ['http', 'https'] }),
  base64: Joi.string()
    .min(1)
    .custom(
      (value: string, helpers) => (isBase64(value) ? value : helpers.error('string.base64')),
      BASE64_RULE,
    ),
  // An object uploaded with POST /media (its id); a list names it once instead of repeating base64.
  mediaId: Joi.string().pattern(MEDIA_ID_PATTERN).messages({
    'string.pattern.base': '"mediaId" must be a media id from POST /media',
  }),
  filename: Joi.string().max(STRING_LIMITS.filename).fileName(),
  caption: Joi.string().max(STRING_LIMITS.caption),
  // type/subtype with optional parameters, e.g. WhatsApp voice notes: "audio/ogg; codecs=opus"
  mimeType: Joi.string()
    .max(255)
    .pattern(/^[\w.+-]+\/[\w.+-]+(\s*;\s*[\w.+-]+=[\w.+-]+)*$/)
    .messages({
      'string.pattern.base': '"mimeType" must be a MIME type such as image/png or audio/ogg; codecs=opus',
    }),
})
  .xor('url', 'base64', 'mediaId')
  .messages({
    'object.missing': 'attachment must have either url, base64 or mediaId',
    'object.xor': 'attachment must have only one of url, base64 or mediaId',
  });

export interface SendAttachmentInput {
  type: AttachmentType;
  url?: string;
  base64?: string;
  mediaId?: string;
  filename?: string;
  caption?: string;
  mimeType?: string;
}

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

export interface ContactCheckBody {
  phones: string[];
}

/**
 * POST /contacts/check body: 1 to MAX_CONTACT_CHECK numbers, each with the rules of `to`. A number
 * listed twice is allowed (each position gets its answer).
 */
export const contactCheckBodySchema = Joi.object<ContactCheckBody>({
  phones: Joi.array()
    .items(phone)
    .min(1)
    .max(MAX_CONTACT_CHECK)
    .required()
    .messages({
      'array.base': '"phones" must be an array of phone numbers',
      'array.min': '"phones" must list at least one phone number',
      'array.max': `"phones" may list at most ${MAX_CONTACT_CHECK} phone numbers`,
    }),
});

export interface OtpBody {
  phone: string;
  code: string;
  language: OtpLanguage;
}

/** POST /otp body: `code` may be a string or a number; it is normalised to its digit string. */
export const otpBodySchema = Joi.object<OtpBody>({
  phone: phone.required(),
  code: Joi.alternatives()
    .try(
      Joi.string()
        .pattern(/^\d{4,8}$/)
        .messages({ 'string.pattern.base': '"code" must be 4 to 8 digits (0-9 only)' }),
      // strict: a string such as "1e3" or " 1234" must not be converted into a code
      Joi.number()
        .strict()
        .integer()
        .min(1000)
        .max(99_999_999)
        .custom((v: number) => String(v)),
    )
    .required()
    .messages({ 'alternatives.match': '"code" must be 4 to 8 digits (0-9 only)' }),
  language: Joi.string()
    .valid(...OTP_LANGUAGES)
    .default('English'),
});

export interface ConnectQuery {
  token?: string;
  method: ConnectMethod;
  phoneNumber?: string;
  forceNew: boolean;
  rawQrCode: boolean;
}

/** GET|POST /connect query. */
export const connectQuerySchema = Joi.object<ConnectQuery>({
  token,
  method: Joi.string()
    .valid(...CONNECT_METHODS)
    .default('qrCode'),
  phoneNumber: phone.when('method', { is: 'pairingCode', then: Joi.required() }),
  forceNew: Joi.boolean().default(false),
  rawQrCode: Joi.boolean().default(false),
});

/** Endpoints that take no parameters accept only the `token` query parameter. */
export const emptyQuerySchema = Joi.object({ token });

/** Joi's error details in the spec's shape. The "either text or attachment" rule names both fields. */
export function toValidationDetails(error: ValidationError): ValidationDetail[] {
  return error.details.map((d) => {
    const peers = d.type === 'object.missing' ? (d.context?.peers as string[] | undefined) : undefined;
    // The send body's content rule keeps the spec's path whatever other content fields it lists.
    const sendContent = peers?.includes('text') ? ['text', 'attachment'] : peers;
    // A field that must not come with another (`.without`) is named, not the whole body.
    const main = d.type === 'object.without' ? (d.context?.main as string | undefined) : undefined;
    const path = sendContent && d.path.length === 0 ? sendContent : main ? [...d.path, main] : d.path;
    return { path, message: d.message.replace(/"/g, '') };
  });
}

/** More fields than any request of this API has: refused before Joi walks them one by one. */
const MAX_FIELDS = 32;
/** At most this many `details` entries are returned (the first problems are the useful ones). */
const MAX_DETAILS = 50;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const isPrototypeKey = (key: string) => key === '__proto__';

/** The detail of a top-level list (`to`) longer than its limit; also used by the API's body reader. */
export function listTooLong(key: string, max: number): ValidationDetail {
  return { path: [key], message: `${key} may list at most ${max} phone numbers` };
}

/**
 * Cheap structural checks before Joi: a body of hundreds of thousands of unknown fields, or a
 * `to` list far over the limit, would otherwise be validated item by item (seconds of CPU,
 * hundreds of MB, a stack overflow) before being refused. `__proto__` is refused at any depth:
 * JSON.parse makes it an own field, and Joi would silently drop it from a nested object instead
 * of reporting it, while a careless copy elsewhere could turn it into a prototype.
 */
function structuralProblem(value: unknown, maxItems: Record<string, number>): ValidationDetail | undefined {
  if (!isPlainObject(value)) return undefined;
  for (const [key, max] of Object.entries(maxItems)) {
    const v = value[key];
    if (Array.isArray(v) && v.length > max) return listTooLong(key, max);
  }
  // Breadth-first over objects and arrays; bodies are shallow (the body reader caps their depth).
  const queue: { node: unknown; path: (string | number)[] }[] = [{ node: value, path: [] }];
  for (let i = 0; i < queue.length; i++) {
    const { node, path } = queue[i]!;
    if (Array.isArray(node)) {
      node.forEach((item, index) => {
        if (typeof item === 'object' && item !== null) queue.push({ node: item, path: [...path, index] });
      });
      continue;
    }
    if (!isPlainObject(node)) continue;
    const fields = Object.keys(node);
    if (fields.length > MAX_FIELDS) {
      return { path: [], message: `an object in the request has more than ${MAX_FIELDS} fields` };
    }
    for (const key of fields) {
      const at = [...path, key];
      if (isPrototypeKey(key)) return { path: at, message: `${at.join('.')} is not allowed` };
      // Not named: joi's details would repeat the key, and the answer would carry the surrogate.
      if (hasLoneSurrogate(key)) return { path, message: 'a field name must be valid Unicode text' };
      const v = node[key];
      if (typeof v === 'object' && v !== null) queue.push({ node: v, path: at });
    }
  }
  return undefined;
}

/**
 * Validates `value`; returns the normalised value or the spec's details.
 * `maxItems` names top-level arrays whose length is checked before anything else.
 */
export function validate<T>(
  schema: Schema<T>,
  value: unknown,
  maxItems: Record<string, number> = {},
): { value: T; details?: undefined } | { value?: undefined; details: ValidationDetail[] } {
  const problem = structuralProblem(value, maxItems);
  if (problem) return { details: [problem] };
  const result = schema.validate(value, { abortEarly: false, convert: true, stripUnknown: false });
  if (result.error) return { details: toValidationDetails(result.error).slice(0, MAX_DETAILS) };
  return { value: result.value as T };
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

export interface WebhookBody {
  url: string;
  events?: EventType[];
  rotateSecret: boolean;
}

/** PUT /webhook body: the endpoint (http or https), the events it wants (all when omitted). */
export const webhookBodySchema = Joi.object<WebhookBody>({
  url: Joi.string()
    .max(STRING_LIMITS.url)
    .uri({ scheme: ['http', 'https'] })
    .required(),
  events: Joi.array()
    .items(Joi.string().valid(...EVENT_TYPES))
    .min(1)
    .unique(),
  rotateSecret: Joi.boolean().default(false),
});

export interface MessagesQuery {
  token?: string;
  batchId?: string;
  status?: (typeof MESSAGE_STATUSES)[number];
  direction?: 'outbound' | 'inbound';
  limit: number;
  cursor?: string;
}

/** GET /messages query: filters, a page size (1–100, default 50) and the cursor of the previous page. */
export const messagesQuerySchema = Joi.object<MessagesQuery>({
  token,
  batchId: Joi.string().max(128),
  status: Joi.string().valid(...MESSAGE_STATUSES),
  direction: Joi.string().valid('outbound', 'inbound'),
  limit: Joi.number().integer().min(1).max(100).default(50),
  cursor: Joi.string()
    .max(64)
    .pattern(/^\d+$/)
    .messages({ 'string.pattern.base': '"cursor" must be the nextCursor of a previous page' }),
});

export interface BatchesQuery {
  token?: string;
  limit: number;
  cursor?: string;
}

/** GET /batches query: a page size (1–100, default 20) and the cursor of the previous page. */
export const batchesQuerySchema = Joi.object<BatchesQuery>({
  token,
  limit: Joi.number().integer().min(1).max(100).default(20),
  cursor: Joi.string()
    .max(160)
    .pattern(/^\d{1,16}_[A-Za-z0-9-]{1,128}$/)
    .messages({ 'string.pattern.base': '"cursor" must be the nextCursor of a previous page' }),
});
