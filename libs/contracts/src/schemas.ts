/**
 * The request bodies and queries other than the send's (send-body.ts) and the event log's
 * (event-log-query.ts): contact checks, OTP, connect, the webhook, and the message and batch lists.
 */
import { Joi } from './text.js';
import {
  CONNECT_METHODS,
  MESSAGE_STATUSES,
  OTP_LANGUAGES,
  STRING_LIMITS,
  MAX_CONTACT_CHECK,
} from './limits.js';
import type { OtpLanguage, ConnectMethod } from './limits.js';
import { EVENT_TYPES, type EventType } from './events.js';
import { phone, token } from './request-fields.js';

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
