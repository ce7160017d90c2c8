import {
  BATCH_STATES,
  EVENT_TYPES,
  CONNECTION_STATUSES,
  PROXY_ERROR_KINDS,
  MESSAGE_STATUSES,
  OTP_LANGUAGES,
  ACCOUNT_ERRORS,
  ERRORS,
  FAILURE_REASONS,
  INBOUND_KEEP_ERRORS,
  PASSKEY_FAILURES,
  PASSKEY_STEPS,
} from '@mgw/contracts';
import { HEALTH_REASONS, RESTRICTION_REASONS } from '@mgw/store';
import type { JsonSchema } from './joi-schema.js';
import { messageDeliveryProperties } from './message-delivery.js';
import { messageKindProperties } from './message-kinds.js';
import { closed, int, timestamp } from './schema-helpers.js';

/**
 * Response bodies and headers of the public API, as JSON Schema. Closed objects
 * (`additionalProperties: false`): the API tests validate every answer against them, so a field
 * the document does not name fails a test instead of drifting in unnoticed.
 */

const str = (description?: string): JsonSchema => ({
  type: 'string',
  ...(description ? { description } : {}),
});
const yes = { const: true } as const;
const nullableInt = (description: string): JsonSchema => ({
  type: ['integer', 'null'],
  minimum: 0,
  description,
});

export const schemas: Record<string, JsonSchema> = {
  Error: closed(
    {
      success: { const: false },
      error: str('What went wrong (see the error table of docs/api.md).'),
      details: {
        type: 'array',
        description: 'Validation problems (400): the path of each field and a message.',
        items: closed(
          {
            path: { type: 'array', items: { type: ['string', 'integer'] } },
            message: { type: 'string' },
          },
          ['path', 'message'],
        ),
      },
      resetIn: { type: 'integer', minimum: 1, description: 'On 429: seconds to wait before retrying.' },
      messageId: str(
        'On an OTP that failed or timed out (502, 504): the message created for it. On a 503 with `outcome: unknown`: the message (a list: its batch) the request would have created.',
      ),
      outcome: {
        const: 'unknown',
        description:
          "On a 503 of /send or /otp: the request's writes went out and storage did not answer, so whether it was accepted is unknown. A retry with the same Idempotency-Key answers what happened, never a second message.",
      },
      messageIds: {
        type: 'array',
        items: { type: 'string' },
        description: 'With `outcome: unknown` on a list: the ids its messages would have.',
      },
      step: {
        enum: [...PASSKEY_STEPS],
        description: "On the 409 of POST /connect/passkey…: the step the device's passkey link is at.",
      },
      queued: {
        ...closed({ messages: { type: 'integer' }, bytes: { type: 'integer' } }, ['messages', 'bytes']),
        description: "On the device quota's 429: what the device holds.",
      },
      limit: {
        anyOf: [
          closed({ messages: { type: 'integer' }, bytes: { type: 'integer' } }, ['messages', 'bytes']),
          closed({ bytes: { type: 'integer' }, objects: { type: 'integer' } }, ['bytes', 'objects']),
        ],
        description: "On a device quota's 429 (queued messages, or stored media): what it may hold.",
      },
      stored: {
        ...closed({ bytes: { type: 'integer' }, objects: { type: 'integer' } }, ['bytes', 'objects']),
        description: "On the media quota's 429 (POST /media): what the device stores.",
      },
    },
    ['success', 'error'],
  ),
  ConnectResult: closed(
    {
      success: yes,
      status: { enum: [...CONNECTION_STATUSES] },
      qrCode: str(
        'QR mode: a PNG data URL (`data:image/png;base64,…`), or the raw QR string with `rawQrCode=true`.',
      ),
      pairingCode: str('Pairing-code mode: eight letters and digits to enter on the phone.'),
      message: str('E.g. `Already connected`.'),
    },
    ['success'],
  ),
  DisconnectResult: closed(
    {
      success: yes,
      message: str('`Disconnected and logged out`, `Already disconnected` or `Pairing cancelled`.'),
    },
    ['success', 'message'],
  ),
  Status: closed(
    {
      success: yes,
      status: { enum: [...CONNECTION_STATUSES] },
      phone: str('Phone number of the linked account (connected only).'),
      name: str('Account name (connected only).'),
      profilePic: str('URL of the profile picture (connected only, when the account has one).'),
      reason: {
        enum: [...PROXY_ERROR_KINDS.map((kind) => `proxy_${kind}`), 'passkey_required', ...PASSKEY_FAILURES],
        description:
          "Connecting: the device's proxy is why its connection failed (unreachable, credentials refused, target refused, other), or `passkey_required`: the link waits for the account's passkey (`passkey` says where it stands). Disconnected: how a passkey-gated link ended (expired, refused by WhatsApp, no answer, options missing, failed).",
      },
      passkey: {
        ...closed(
          {
            step: { enum: [...PASSKEY_STEPS] },
            expiresAt: timestamp('When the passkey request expires.'),
          },
          ['step', 'expiresAt'],
        ),
        description:
          'A passkey-gated link (docs/passkeys.md): its step (`assertion`, `verifying`, `confirm_code`, `finishing`) and when its request expires. GET /connect/passkey has the request and the code.',
      },
      sending: { $ref: '#/components/schemas/Sending' },
    },
    ['success', 'status'],
  ),
  DeviceHealth: closed(
    {
      score: {
        type: 'integer',
        minimum: 0,
        maximum: 100,
        description: '100 less the penalties of `reasons`, at least 0.',
      },
      reasons: {
        type: 'array',
        description: 'What cost the device points, the costliest first; empty at 100.',
        items: closed(
          {
            code: {
              enum: [...Object.values(HEALTH_REASONS)],
              description:
                "A pause in force (reach-out time lock, capped, rate-limited, failures in a row), or what happened in the window (acks 463, acks 429, other refusals, reconnects, logouts), or today's share of first contacts.",
            },
            penalty: { type: 'integer', minimum: 1, maximum: 100, description: 'Points it costs.' },
            message: str('What happened, with its count, for a person.'),
          },
          ['code', 'penalty', 'message'],
        ),
      },
    },
    ['score', 'reasons'],
  ),
  Sending: closed(
    {
      sentToday: int('Messages the device sent in its current cap window (its day, in its time zone).'),
      firstContactsToday: int('Of those, first messages to numbers the account had no chat with.'),
      dailyCap: nullableInt('The cap of the window (the warm-up step while it lasts); null = none.'),
      firstContactCap: nullableInt('The cap on first contacts per window; null = none.'),
      otpReserve: { type: 'number', description: 'Share of each cap only OTPs may use.' },
      warmupDay: int('Day of the warm-up after the account was linked (1 = the link day), while it lasts.'),
      quietHours: str('No message but OTPs goes between these times (start-end, device time zone).'),
      timeZone: str('The device time zone (IANA).'),
      windowEndsAt: timestamp('When the current window ends and its counters start again.'),
      restriction: closed(
        {
          reason: {
            enum: [...Object.values(RESTRICTION_REASONS)],
            description:
              'Why WhatsApp pushes back: reach-out time lock, ack 463, ack 429, failures in a row.',
          },
          until: timestamp('When sending resumes by itself.'),
          since: timestamp('When the pause began.'),
        },
        ['reason', 'until', 'since'],
      ),
      pausedUntil: timestamp('Waiting messages are held until then (a restriction or quiet hours).'),
      health: { $ref: '#/components/schemas/DeviceHealth' },
    },
    [
      'sentToday',
      'firstContactsToday',
      'dailyCap',
      'firstContactCap',
      'otpReserve',
      'timeZone',
      'windowEndsAt',
      'health',
    ],
  ),
  SendResult: closed(
    {
      success: yes,
      messageId: str('The message id (one recipient), or the batch id (`to` is a list).'),
      messageIds: {
        type: 'array',
        items: { type: 'string' },
        description: 'When `to` is a list: one message id per recipient, in `to` order.',
      },
    },
    ['success', 'messageId'],
  ),
  SendDeleted: closed(
    {
      success: yes,
      messageId: str('The deleted message (it was still queued: it is never sent).'),
      status: { const: 'deleted' },
    },
    ['success', 'messageId', 'status'],
  ),
  OtpResult: closed(
    {
      success: yes,
      message: { const: 'OTP sent successfully' },
      data: closed(
        {
          messageId: str(),
          platformMessageId: str('The WhatsApp message id.'),
          phone: str(),
          code: str('The code, as digits.'),
          language: { enum: [...OTP_LANGUAGES] },
          sentAt: timestamp('When WhatsApp acknowledged it.'),
        },
        ['messageId', 'platformMessageId', 'phone', 'code', 'language', 'sentAt'],
      ),
    },
    ['success', 'message', 'data'],
  ),
  Message: closed(
    {
      messageId: str(),
      deviceId: str(),
      to: str('Outbound: the recipient as the request named it, a phone number or a LID (`<digits>@lid`).'),
      contact: {
        $ref: '#/components/schemas/ContactIdentity',
        description:
          'Who the message is to (outbound) or from (inbound), as far as the device knows: see docs/contacts-and-identities.md.',
      },
      status: { enum: [...MESSAGE_STATUSES, 'received'] },
      kind: { enum: ['send', 'otp'] },
      platformMessageId: str(),
      batchId: str(),
      createdAt: timestamp('Accepted.'),
      sendAt: timestamp(
        'A scheduled send: when it is due. **Choice:** the message reads `scheduled` until then, `queued` from then on.',
      ),
      sentAt: timestamp('Acknowledged by WhatsApp.'),
      deliveredAt: timestamp('Delivery receipt.'),
      readAt: timestamp('Read receipt.'),
      failedAt: timestamp('Failed for good.'),
      error: { type: 'string', description: `Why it failed: ${Object.values(FAILURE_REASONS).join(', ')}.` },
      direction: {
        enum: ['outbound', 'inbound'],
        description:
          '`outbound`: sent by the gateway (with `to`, `kind`); `inbound`: a contact wrote it (status `received`, with `from`).',
      },
      from: str(
        "Inbound: the contact's phone number (digits); absent when it is known only by its LID (`contact.lid`).",
      ),
      text: str(
        "Inbound: the text or caption. An edited text (ours or a contact's): its current text, the last of `edits`. Also an outbound message of the account's history (`history`).",
      ),
      history: {
        type: 'boolean',
        const: true,
        description:
          "A message of the account's history (the device's `historySync` setting): sent or received before the link, recorded from the phone's copy (an outbound one carries `text`, no `kind`).",
      },
      edits: {
        type: 'array',
        items: closed({ text: str(), at: timestamp('When it was edited.') }, ['text', 'at']),
        description:
          'An edited text: its edits, oldest first (POST /send `edit`, or the contact edited it). Sealed at rest like every text.',
      },
      deletedAt: timestamp(
        'Status `deleted`: when it was deleted for everyone (POST /send `delete`; or taken out of the queue unsent), or when the contact deleted it (an inbound message: its text is gone).',
      ),
      attachment: {
        ...closed(
          {
            type: str(),
            mimeType: str(),
            fileName: str(),
            size: { type: 'integer', minimum: 0 },
            mediaId: str('Kept on arrival in the media store (docs/media.md): its id (GET /media/{id}).'),
            url: str('Kept in S3: a pre-signed GET of the file, signed for this answer.'),
            urlExpiresAt: timestamp(
              'When `url` stops working (MEDIA_URL_TTL_SECONDS, at most the retention).',
            ),
            mediaError: {
              enum: [...INBOUND_KEEP_ERRORS],
              description: 'Of a type the device keeps, but not kept: why.',
            },
          },
          ['type', 'mimeType', 'size'],
        ),
        description:
          'Inbound: the attachment (its bytes: GET /messages/{id}/media; or `url` when the device keeps its type in S3).',
      },
      ...messageDeliveryProperties,
      replyTo: str('Inbound: our messageId of the message it quotes.'),
      receivedAt: timestamp('Inbound: when the contact sent it.'),
      ...messageKindProperties,
      mentions: {
        type: 'array',
        items: str(),
        description:
          "The phones or LIDs the text or caption mentioned: ours (POST /send `mentions`, once sent) or a contact's (a group member mentioning others). Sealed at rest.",
      },
      chat: {
        $ref: '#/components/schemas/GroupChat',
        description: 'A group message (inbound): the group. One-to-one messages have none.',
      },
    },
    ['messageId', 'deviceId', 'status', 'direction', 'platformMessageId', 'createdAt'],
  ),
  MessageResult: closed({ success: yes, data: { $ref: '#/components/schemas/Message' } }, [
    'success',
    'data',
  ]),
  Media: { type: 'string', format: 'binary', description: 'The file.' },
  MessagePage: closed(
    {
      success: yes,
      data: closed(
        {
          messages: { type: 'array', items: { $ref: '#/components/schemas/Message' } },
          nextCursor: str('The `cursor` of the next (older) page; absent on the last one.'),
        },
        ['messages'],
      ),
    },
    ['success', 'data'],
  ),
  Webhook: closed(
    {
      url: str('Where events are POSTed.'),
      events: { type: 'array', items: { enum: [...EVENT_TYPES] }, description: 'The events delivered.' },
      createdAt: timestamp('When the endpoint was first set.'),
      disabledAt: timestamp(
        'Set when the endpoint answered 410 Gone: nothing is delivered until it is set again.',
      ),
      disabledReason: str('Why it was disabled (`gone`).'),
      secret: {
        type: 'string',
        pattern: '^whsec_',
        description: 'The Standard Webhooks signing secret: only in the answer that created or rotated it.',
      },
    },
    ['url', 'events', 'createdAt'],
  ),
  WebhookResult: closed({ success: yes, data: { $ref: '#/components/schemas/Webhook' } }, [
    'success',
    'data',
  ]),
  WebhookRemoved: closed({ success: yes, message: { const: 'Webhook removed' } }, ['success', 'message']),
  Batch: closed(
    {
      batchId: str(),
      total: { type: 'integer', minimum: 1 },
      state: {
        enum: [...BATCH_STATES],
        description:
          '`active` (sending), `paused` (POST …/pause: nothing more is sent until …/resume), `cancelled` (POST …/cancel: nothing more is sent; the unsent messages end `failed` / `cancelled`), `completed` (no message is queued). A cancelled list stays `cancelled` once its messages are final.',
      },
      counts: {
        ...closed(
          {
            ...Object.fromEntries(MESSAGE_STATUSES.map((st) => [st, { type: 'integer', minimum: 0 }])),
            held: {
              type: 'integer',
              minimum: 0,
              description:
                'Of the `queued` ones, how many the sender holds now (their records show `held`); not part of the sum.',
            },
          },
          [...MESSAGE_STATUSES, 'held'],
        ),
        description:
          'Messages of the list by status; the statuses sum to `total`, and `held` is a subset of `queued`. `scheduled`: not due yet (a scheduled list before its `sendAt`).',
      },
      createdAt: timestamp('Accepted.'),
      sendAt: timestamp('A scheduled list: when it is due.'),
      completedAt: timestamp('When the last message left `queued` (sent or failed).'),
      pausedAt: timestamp('While `paused`: when the pause began.'),
      cancelledAt: timestamp('When it was cancelled.'),
      poolId: str('A list sent through a pool (a pool token): its pool (docs/pools.md).'),
      devices: {
        type: 'array',
        description:
          "A pooled list: each device that holds part of it, with its part's counts (a message moved counts where it went).",
        items: closed(
          {
            deviceId: str(),
            total: { type: 'integer', minimum: 0 },
            counts: { type: 'object', additionalProperties: { type: 'integer', minimum: 0 } },
          },
          ['deviceId', 'total', 'counts'],
        ),
      },
      moved: {
        type: 'integer',
        minimum: 0,
        description: 'A pooled list: messages moved off a device that dropped out of the pool.',
      },
    },
    ['batchId', 'total', 'state', 'counts', 'createdAt'],
  ),
  BatchResult: closed({ success: yes, data: { $ref: '#/components/schemas/Batch' } }, ['success', 'data']),
  BatchPage: closed(
    {
      success: yes,
      data: closed(
        {
          batches: { type: 'array', items: { $ref: '#/components/schemas/Batch' } },
          nextCursor: str('The `cursor` of the next (older) page; absent on the last one.'),
        },
        ['batches'],
      ),
    },
    ['success', 'data'],
  ),
  ContactCheck: closed(
    {
      phone: str('The number as asked.'),
      onWhatsApp: { type: 'boolean', description: 'Whether the number has a WhatsApp account.' },
      lid: str("The number's LID (`…@lid`), when WhatsApp gave it: a send to the number goes to it."),
      phoneJid: str(
        'The phone JID WhatsApp knows the number by (`<digits>@s.whatsapp.net`, its `pn_jid`), when on WhatsApp: it may differ from the number asked (a country whose numbers WhatsApp rewrites).',
      ),
    },
    ['phone', 'onWhatsApp'],
  ),
  ContactCheckResult: closed(
    {
      success: yes,
      data: closed(
        {
          results: {
            type: 'array',
            items: { $ref: '#/components/schemas/ContactCheck' },
            description: "One answer per number, in the request's order.",
          },
        },
        ['results'],
      ),
    },
    ['success', 'data'],
  ),
  Health: closed({ success: yes, status: { enum: ['ok', 'ready'] } }, ['success', 'status']),
};

const intHeader = (description: string) => ({ description, schema: { type: 'integer' } });

export const headers: Record<string, JsonSchema> = {
  'X-RateLimit-Limit': intHeader(
    "The endpoint's requests per window (per token), or the failed-auth guard's failures allowed.",
  ),
  'X-RateLimit-Remaining': intHeader('Requests (or failures) left in the current window.'),
  'X-RateLimit-Reset': intHeader('Unix time in seconds (rounded up) at which the window ends.'),
  'X-Request-Id': {
    description: "The request's id (the client's `X-Request-Id` when sane).",
    schema: { type: 'string' },
  },
  'Idempotent-Replayed': {
    description: '`true` when the answer is the stored first answer of this Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
  Allow: { description: 'On 405: the methods the path serves.', schema: { type: 'string' } },
};

/** What each error status means, for the response descriptions. */
export const STATUS_TEXT: Record<number, string> = {
  400: `\`${ERRORS.invalidRequest}\`: body, query or header invalid; \`details\` says what.`,
  401: `\`${ERRORS.invalidToken}\`: token missing, unknown, revoked or expired.`,
  403: `\`${ERRORS.poolTokenNotAllowed}\`: a token linked to a pool sends, and reads and controls what it sent; everything that acts on one device wants a device token (docs/pools.md).`,
  404: 'Not found.',
  405: `\`${ERRORS.methodNotAllowed}\`; \`Allow\` lists the methods.`,
  408: `\`${ERRORS.requestTimeout}\`.`,
  409: 'Conflict with the device state (e.g. no connected device, a pairing or disconnect in progress).',
  413: 'Body (or attachment) too large.',
  422: `\`${ERRORS.idempotencyConflict}\`; on /send and /otp also \`${ACCOUNT_ERRORS.recipientBlocked}\` (the single recipient is on the account's blocklist; \`details\` names it); on PUT /profile/photo \`${ACCOUNT_ERRORS.photoUnreachable}\`.`,
  429: `\`${ERRORS.rateLimited}\` (per token), \`${ERRORS.tooManyAuthFailures}\`, or the device queue quota; \`resetIn\` says when to retry.`,
  431: `\`${ERRORS.headersTooLarge}\`.`,
  500: `\`${ERRORS.internal}\`.`,
  502: 'A dependency failed while handling the request (connection service, or an OTP that could not be sent).',
  503: 'A dependency is down or silent: storage, the connection service, WhatsApp, or the device owner. A request is answered within about `REDIS_COMMAND_TIMEOUT_MS` when storage does not answer; `outcome: unknown` when an accept went out unanswered.',
  504: 'No answer in time (connection service, or an OTP not sent in time).',
};
