import {
  ERRORS,
  batchesQuerySchema,
  contactCheckBodySchema,
  connectQuerySchema,
  emptyQuerySchema,
  otpBodySchema,
  sendBodySchema,
  messagesQuerySchema,
  webhookBodySchema,
} from '@mgw/contracts';
import type Joi from 'joi';
import type { ApiConfig } from '../config.js';
import { STATUS_TEXT, headers, schemas } from './components.js';
import { groupPaths, groupSchemas } from './groups.js';
import { mediaPaths, mediaSchemas } from './media.js';
import { accountPaths, accountSchemas } from './account.js';
import { OPENAPI_TAGS, pathsUnder, type OperationTag } from './tags.js';
import { broadcastPaths, broadcastSchemas } from './broadcasts.js';
import { channelPaths, channelSchemas } from './channels.js';
import { chatPaths, chatSchemas } from './chats.js';
import { labelPaths, labelSchemas } from './labels.js';
import {
  eventBrokerPaths,
  eventLogOperation,
  eventLogSchemas,
  eventSocketOperation,
  eventStreamOperation,
} from './event-log.js';
import { joiToJsonSchema, type JsonSchema } from './joi-schema.js';
import { health, mcpOperation } from './plain-operations.js';
import { SEND_DESCRIPTION } from './send-description.js';
import { ref } from './schema-helpers.js';

export const API_BASE = '/api/messenger/v1';
export const OPENAPI_PATH = `${API_BASE}/openapi.json`;

/** Errors every authenticated endpoint may answer (403: a pool token where a device token is wanted). */
const COMMON_ERRORS = [400, 401, 403, 408, 429, 431, 500, 503];

export interface OperationSpec {
  tag: OperationTag;
  summary: string;
  description: string;
  /** The limit of this endpoint (RATE_LIMIT_*), or none. */
  rateLimit?: number;
  query?: Joi.ObjectSchema;
  body?: Joi.Schema;
  idempotent?: boolean;
  success: { status: number; schema: string; description: string };
  /** A second success answer (e.g. POST /send `delete` of a queued message: 200). */
  alsoSuccess?: { status: number; schema: string; description: string };
  errors: number[];
}

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** Query parameters from the joi query schema; `token` is the query-token security scheme instead. */
function queryParameters(schema: Joi.ObjectSchema): JsonSchema[] {
  const object = joiToJsonSchema(schema);
  const props = object.properties as Record<string, JsonSchema>;
  const required = new Set((object.required as string[] | undefined) ?? []);
  const conditional = object.if ? (object.then as { required: string[] }).required : [];
  const when = object.if ? (object.if as { properties: Record<string, { const: unknown }> }).properties : {};
  return Object.entries(props)
    .filter(([name]) => name !== 'token')
    .map(([name, schema]) => ({
      name,
      in: 'query',
      required: required.has(name),
      schema,
      ...(conditional.includes(name)
        ? {
            description: `Required when ${Object.entries(when)
              .map(([k, v]) => `\`${k}\` is \`${String(v.const)}\``)
              .join(' and ')}.`,
          }
        : {}),
    }));
}

function operation(spec: OperationSpec, config: ApiConfig): JsonSchema {
  const common: Record<string, unknown> = { 'X-Request-Id': headerRef('X-Request-Id') };
  const limited = spec.rateLimit
    ? {
        'X-RateLimit-Limit': headerRef('X-RateLimit-Limit'),
        'X-RateLimit-Remaining': headerRef('X-RateLimit-Remaining'),
        'X-RateLimit-Reset': headerRef('X-RateLimit-Reset'),
      }
    : {};
  const replay = spec.idempotent ? { 'Idempotent-Replayed': headerRef('Idempotent-Replayed') } : {};
  const responses: Record<string, unknown> = {
    [spec.success.status]: {
      description: spec.success.description,
      headers: { ...common, ...limited, ...replay },
      content: { 'application/json': { schema: ref(spec.success.schema) } },
    },
  };
  if (spec.alsoSuccess)
    responses[spec.alsoSuccess.status] = {
      description: spec.alsoSuccess.description,
      headers: { ...common, ...limited, ...replay },
      content: { 'application/json': { schema: ref(spec.alsoSuccess.schema) } },
    };
  for (const status of [...new Set([...COMMON_ERRORS, ...spec.errors])].sort()) {
    responses[status] = {
      description: STATUS_TEXT[status] ?? 'Error.',
      headers: { ...common, ...limited, ...(spec.idempotent && status !== 400 ? replay : {}) },
      content: { 'application/json': { schema: ref('Error') } },
    };
  }
  const window = `${Math.round(config.rateLimitWindowMs / 1000)} s`;
  const parameters = [
    ...(spec.query ? queryParameters(spec.query) : []),
    ...(spec.idempotent
      ? [
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            description: 'Replays the first answer of the same request (24 h, per token).',
            schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
          },
        ]
      : []),
  ];
  return {
    tags: [spec.tag],
    summary: spec.summary,
    description:
      spec.description +
      (spec.rateLimit ? `\n\nRate limit: ${spec.rateLimit} requests per ${window} per token.` : ''),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(spec.body
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: joiToJsonSchema(spec.body) } },
          },
        }
      : {}),
    responses,
  };
}

/**
 * The OpenAPI 3.1 document of the public API. Request bodies and query parameters are generated
 * from the joi schemas the API validates with (@mgw/contracts), so the two cannot drift; response
 * bodies are the closed schemas of components.ts, which the API tests check every answer against.
 */
export function buildOpenApi(config: ApiConfig): JsonSchema {
  const r = config.rateLimits;
  const connect: OperationSpec = {
    tag: 'Connection',
    summary: 'Link the device (QR code or pairing code)',
    description:
      "Asks the connection service to link the token's device; answers the current QR (a PNG data URL, or raw with `rawQrCode=true`) or pairing code. A connect during a pairing answers that pairing's current code.",
    rateLimit: r.connect,
    query: connectQuerySchema,
    success: {
      status: 200,
      schema: 'ConnectResult',
      description: 'Pairing started, joined, or already connected.',
    },
    errors: [409, 502, 503, 504],
  };
  const op = (spec: OperationSpec) => operation(spec, config);
  const ops = {
    status: operation(
      {
        tag: 'Connection',
        summary: 'Connection status',
        description:
          "The device's status; phone, name and picture while connected. Beyond the spec, a linked device also has `sending` (its usage of the sending policy, its pause) and `health` (a score 0-100 with the reasons that cost it points).",
        rateLimit: r.status,
        query: emptyQuerySchema,
        success: { status: 200, schema: 'Status', description: 'The status.' },
        errors: [],
      },
      config,
    ),
    send: operation(
      {
        tag: 'Messages',
        summary: 'Send a message (text and/or attachment) to one recipient or a list',
        description: SEND_DESCRIPTION,
        rateLimit: r.send,
        query: emptyQuerySchema,
        body: sendBodySchema(config.maxRecipients),
        idempotent: true,
        success: { status: 202, schema: 'SendResult', description: 'Queued.' },
        alsoSuccess: {
          status: 200,
          schema: 'SendDeleted',
          description: '`delete` of a message still queued: taken out of the queue, never sent.',
        },
        errors: [404, 409, 413, 422],
      },
      config,
    ),
    otp: operation(
      {
        tag: 'Messages',
        summary: 'Send a one-time password',
        description:
          'Builds the text from the language template (code first, in bold) and waits until it is sent.',
        rateLimit: r.otp,
        query: emptyQuerySchema,
        body: otpBodySchema,
        idempotent: true,
        success: { status: 200, schema: 'OtpResult', description: 'Sent.' },
        errors: [409, 413, 422, 502, 504],
      },
      config,
    ),
    disconnect: operation(
      {
        tag: 'Connection',
        summary: 'Disconnect (log the account out)',
        description:
          'Logs the account out and deletes its credentials; waiting messages end failed (`logged_out`).',
        rateLimit: r.disconnect,
        query: emptyQuerySchema,
        success: { status: 200, schema: 'DisconnectResult', description: 'Logged out, or nothing to do.' },
        errors: [409, 413, 502, 504],
      },
      config,
    ),
    message: operation(
      {
        tag: 'Messages',
        summary: 'A message and its status',
        description: "The record of a message of the token's device (kept MESSAGE_RETENTION_SECONDS).",
        rateLimit: r.messages,
        query: emptyQuerySchema,
        success: { status: 200, schema: 'MessageResult', description: 'The message.' },
        errors: [404],
      },
      config,
    ),
  };
  const events = {
    list: operation(
      {
        tag: 'Messages',
        summary: "The device's messages, newest first",
        description:
          'A page of records (outbound and inbound) filtered by `batchId`, `status` and `direction`, newest first; pass `nextCursor` as `cursor` for the next page. A filtered page reads at most 2,000 messages, so it may be short (even empty) while `nextCursor` is set.',
        rateLimit: r.messages,
        query: messagesQuerySchema,
        success: { status: 200, schema: 'MessagePage', description: 'A page.' },
        errors: [],
      },
      config,
    ),
    media: operation(
      {
        tag: 'Messages',
        summary: 'The attachment of an inbound message',
        description:
          'Downloaded from WhatsApp when asked (by the sender that owns the device) and answered as the file itself, with its MIME type and, for documents, its file name. 404 when the message has no attachment; 409 when no sender holds the device; 502 when WhatsApp did not give it; 504 when the download took over 30 s.',
        rateLimit: r.messages,
        query: emptyQuerySchema,
        success: { status: 200, schema: 'Media', description: 'The file.' },
        errors: [404, 409, 502, 504],
      },
      config,
    ),
    batch: operation(
      {
        tag: 'Messages',
        summary: "A list's progress",
        description:
          'The state of a list (the `messageId` /send answered for it) and counts of its messages by status; they always sum to `total`, and `counts.held` (how many queued ones are held now) is a subset of `queued`. `completedAt` is set once no message is queued.',
        rateLimit: r.messages,
        query: emptyQuerySchema,
        success: { status: 200, schema: 'BatchResult', description: 'The counts.' },
        errors: [404],
      },
      config,
    ),
    batches: operation(
      {
        tag: 'Messages',
        summary: "The device's lists, newest first",
        description:
          'A page of lists (each as GET /batches/{batchId} answers it), newest first; pass `nextCursor` as `cursor` for the next page. Lists are kept as long as message records (MESSAGE_RETENTION_SECONDS).',
        rateLimit: r.messages,
        query: batchesQuerySchema,
        success: { status: 200, schema: 'BatchPage', description: 'A page.' },
        errors: [],
      },
      config,
    ),
    pauseBatch: operation(
      {
        tag: 'Messages',
        summary: 'Pause a list',
        description:
          'Nothing more of the list is sent until it is resumed: its queued messages wait (`held.reason` `batch_paused`). A message whose send already started (handed to the socket) may still go. **Choice:** pausing a paused list is a 200 that changes nothing; a completed list answers 409 `' +
          ERRORS.batchCompleted +
          '` and a cancelled one 409 `' +
          ERRORS.batchCancelled +
          '`. Emits `batch.paused`.',
        rateLimit: r.messages,
        query: emptyQuerySchema,
        success: { status: 200, schema: 'BatchResult', description: 'The list after the change.' },
        errors: [404, 409, 413],
      },
      config,
    ),
    resumeBatch: operation(
      {
        tag: 'Messages',
        summary: 'Resume a paused list',
        description:
          'Its held messages go back to the queue at once and are sent as before (caps, pacing and quiet hours still apply). **Choice:** resuming an active list is a 200 that changes nothing; a completed list answers 409 `' +
          ERRORS.batchCompleted +
          '` and a cancelled one 409 `' +
          ERRORS.batchCancelled +
          '`. Emits `batch.resumed`.',
        rateLimit: r.messages,
        query: emptyQuerySchema,
        success: { status: 200, schema: 'BatchResult', description: 'The list after the change.' },
        errors: [404, 409, 413],
      },
      config,
    ),
    cancelBatch: operation(
      {
        tag: 'Messages',
        summary: 'Cancel a list',
        description:
          'Every message of the list not yet sent ends `failed` with `error: "cancelled"`: once this answers, none of them reaches a contact (also after a sender failover). A message whose send had already started when the cancel arrived may still be sent (its record then reads `sent`). **Choice:** cancelling a cancelled list is a 200 (it finishes a cancel cut short); a completed list answers 409 `' +
          ERRORS.batchCompleted +
          '`. Emits `batch.cancelled`.',
        rateLimit: r.messages,
        query: emptyQuerySchema,
        success: { status: 200, schema: 'BatchResult', description: 'The list after the change.' },
        errors: [404, 409, 413],
      },
      config,
    ),
    putWebhook: operation(
      {
        tag: 'Events',
        summary: "Set the device's webhook endpoint",
        description:
          'Events are POSTed to `url`, signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`), retried with backoff for about a day until a 2xx; `410 Gone` disables the endpoint. The secret is answered when the endpoint is created and when `rotateSecret` is true (the previous one keeps signing for WEBHOOK_SECRET_OVERLAP_SECONDS).',
        rateLimit: r.webhook,
        query: emptyQuerySchema,
        body: webhookBodySchema,
        success: { status: 200, schema: 'WebhookResult', description: 'The endpoint.' },
        errors: [413],
      },
      config,
    ),
    getWebhook: operation(
      {
        tag: 'Events',
        summary: "The device's webhook endpoint",
        description: 'The endpoint, without its secret.',
        rateLimit: r.webhook,
        query: emptyQuerySchema,
        success: { status: 200, schema: 'WebhookResult', description: 'The endpoint.' },
        errors: [404],
      },
      config,
    ),
    deleteWebhook: operation(
      {
        tag: 'Events',
        summary: "Remove the device's webhook endpoint",
        description: 'Removes the endpoint; events not delivered yet are dropped.',
        rateLimit: r.webhook,
        query: emptyQuerySchema,
        success: { status: 200, schema: 'WebhookRemoved', description: 'Removed.' },
        errors: [404, 413],
      },
      config,
    ),
  };
  const contactCheck = operation(
    {
      tag: 'Contacts',
      summary: 'Check which numbers are on WhatsApp',
      description: [
        "Answers, for each of 1 to 1,000 numbers (the rules of `to`), whether it is on WhatsApp, in the request's order (a number listed twice is answered twice), with its LID when WhatsApp gave one.",
        `**Choice:** answers come from the device's contact cache (CONTACT_CACHE_TTL_SECONDS, 7 days by default), which sends share: a number known not to be on WhatsApp fails \`not_on_whatsapp\` without a lookup. The numbers not cached are looked up by the sender holding the device in queries of ${config.contactCheck.batchSize} numbers, ${config.contactCheck.pauseMs} ms apart, so a long check takes a while (about 20 s for 1,000 numbers by default).`,
        `**Choice:** at most ${config.contactCheck.lookupsPerDay || 'unlimited'} numbers per device per day are looked up (CONTACT_LOOKUPS_PER_DAY; cache hits are free; the day starts with the first lookup): a check whose uncached numbers would pass it is refused whole with 429 \`Rate limit exceeded\` and \`resetIn\`.`,
        "409 when the device is not connected; 502 when WhatsApp's lookup failed; 504 when it did not finish in time (retrying is cheap: what was looked up is cached).",
      ].join('\n\n'),
      rateLimit: r.contacts,
      query: emptyQuerySchema,
      body: contactCheckBodySchema,
      success: { status: 200, schema: 'ContactCheckResult', description: 'One answer per number, in order.' },
      errors: [409, 413, 502, 504],
    },
    config,
  );
  const withPathParam = (op: JsonSchema, name: string) => {
    const o = op as { parameters?: JsonSchema[] };
    o.parameters = [
      { name, in: 'path', required: true, schema: { type: 'string', minLength: 1 } },
      ...(o.parameters ?? []),
    ];
  };
  withPathParam(ops.message, 'id');
  withPathParam(events.batch, 'batchId');
  for (const op of [events.pauseBatch, events.resumeBatch, events.cancelBatch]) withPathParam(op, 'batchId');
  withPathParam(events.media, 'id');
  const mediaOk = (events.media as { responses: Record<string, { content?: unknown }> }).responses['200']!;
  mediaOk.content = { '*/*': { schema: { type: 'string', format: 'binary' } } };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Messenger Gateway API',
      version: '1',
      description:
        'HTTP/JSON gateway for linking a WhatsApp account and sending text, media and OTP messages. Every failure is `{ "success": false, "error": "…" }`. Unknown paths answer 404 and known paths called with another method 405 (both after authentication).',
    },
    servers: [{ url: '/' }],
    tags: [...OPENAPI_TAGS],
    security: [{ bearerAuth: [] }, { queryToken: [] }],
    paths: {
      [`${API_BASE}/connect`]: {
        get: operation(connect, config),
        post: operation({ ...connect, errors: [...connect.errors, 413] }, config),
      },
      [`${API_BASE}/disconnect`]: { post: ops.disconnect },
      [`${API_BASE}/status`]: { get: ops.status },
      [`${API_BASE}/send`]: { post: ops.send },
      [`${API_BASE}/otp`]: { post: ops.otp },
      [`${API_BASE}/messages`]: { get: events.list },
      [`${API_BASE}/messages/{id}`]: { get: ops.message },
      [`${API_BASE}/messages/{id}/media`]: { get: events.media },
      [`${API_BASE}/batches`]: { get: events.batches },
      [`${API_BASE}/batches/{batchId}`]: { get: events.batch },
      [`${API_BASE}/batches/{batchId}/pause`]: { post: events.pauseBatch },
      [`${API_BASE}/batches/{batchId}/resume`]: { post: events.resumeBatch },
      [`${API_BASE}/batches/{batchId}/cancel`]: { post: events.cancelBatch },
      [`${API_BASE}/events`]: { get: eventLogOperation(config, op) },
      [`${API_BASE}/events/stream`]: { get: eventStreamOperation(config, op) },
      [`${API_BASE}/events/ws`]: { get: eventSocketOperation(config, op) },
      [`${API_BASE}/events/brokers`]: eventBrokerPaths(config, op),
      [`${API_BASE}/contacts/check`]: { post: contactCheck },
      ...pathsUnder(API_BASE, groupPaths(config, op)),
      ...pathsUnder(API_BASE, mediaPaths(config, op)),
      ...pathsUnder(API_BASE, accountPaths(config, op)),
      ...pathsUnder(API_BASE, broadcastPaths(config, op)),
      ...pathsUnder(API_BASE, channelPaths(config, op)),
      ...pathsUnder(API_BASE, chatPaths(config, op)),
      ...pathsUnder(API_BASE, labelPaths(config, op)),
      [`${API_BASE}/webhook`]: {
        get: events.getWebhook,
        put: events.putWebhook,
        delete: events.deleteWebhook,
      },
      [`${API_BASE}/mcp`]: { post: mcpOperation() },
      [OPENAPI_PATH]: {
        get: {
          tags: ['Operations'],
          summary: 'This document',
          security: [],
          responses: {
            200: {
              description: 'OpenAPI 3.1',
              content: { 'application/json': { schema: { type: 'object' } } },
            },
          },
        },
      },
      '/healthz': { get: health('Liveness: the process runs', false) },
      '/readyz': { get: health('Readiness: Redis answers and accepts writes', true) },
    },
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: '`Authorization: Bearer <API token>` (recommended).',
        },
        queryToken: { type: 'apiKey', in: 'query', name: 'token', description: '`?token=<API token>`.' },
      },
      schemas: {
        ...schemas,
        ...groupSchemas,
        ...accountSchemas,
        ...broadcastSchemas,
        ...channelSchemas,
        ...eventLogSchemas,
        ...mediaSchemas,
        ...chatSchemas,
        ...labelSchemas,
      },
      headers,
    },
  };
}
