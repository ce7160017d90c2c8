import { ACCOUNT_ERRORS, ERRORS, FAILURE_REASONS, PASSKEY_STEPS } from '@mgw/contracts';
import type { JsonSchema } from './joi-schema.js';
import { closed } from './schema-helpers.js';

/**
 * Response bodies and headers of the public API, as JSON Schema. Closed objects
 * (`additionalProperties: false`): the API tests validate every answer against them, so a field
 * the document does not name fails a test instead of drifting in unnoticed.
 */

const str = (description?: string): JsonSchema => ({
  type: 'string',
  ...(description ? { description } : {}),
});

export const schemas: Record<string, JsonSchema> = {
  Error: closed(
    {
      success: { const: false },
      error: str('What went wrong (see the error table of docs/api.md).'),
      details: {
        type: 'array',
        description:
          'Validation problems (400): the path of each field and a message. A workspace quota reached (429, docs/workspaces.md): one entry naming the quota, its limit and when it resets. A Cloud API rule (422, docs/cloud-api.md): the field and the failure reason a send would have met.',
        items: closed(
          {
            path: { type: 'array', items: { type: ['string', 'integer'] } },
            message: { type: 'string' },
            quota: {
              enum: ['devices', 'messagesPerDay', 'queuedMessages', 'mediaBytes', 'tokens', 'users'],
              description:
                "The workspace quota reached (429): one the operator set, or a ceiling of the install's (`devices` without a device quota, `tokens`, console `users`).",
            },
            limit: { type: 'integer', minimum: 0, description: 'Its limit (429).' },
            reason: {
              enum: [
                FAILURE_REASONS.templateNotFound,
                FAILURE_REASONS.templatePaused,
                FAILURE_REASONS.windowClosed,
              ],
              description:
                "A Cloud API rule's 422: the failure reason WhatsApp would have given (a template missing or not approved, paused; the contact's 24-hour window closed).",
            },
            resetsAt: {
              type: ['string', 'null'],
              format: 'date-time',
              description: 'When it resets (429; a daily quota: the next midnight UTC); null: not with time.',
            },
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
