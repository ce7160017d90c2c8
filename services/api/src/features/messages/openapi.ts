/** A device's messages, one message, and an inbound message's attachment in the OpenAPI document. */
import { emptyQuerySchema, messagesQuerySchema } from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { withPathParam, type OperationSpec } from '../../openapi/operation.js';

export function messagePaths(config: ApiConfig, operation: (spec: OperationSpec) => JsonSchema) {
  const r = config.rateLimits;
  const media = withPathParam(
    operation({
      tag: 'Messages',
      summary: 'The attachment of an inbound message',
      description:
        'Downloaded from WhatsApp when asked (by the sender that owns the device) and answered as the file itself, with its MIME type and, for documents, its file name. 404 when the message has no attachment; 409 when no sender holds the device; 502 when WhatsApp did not give it; 504 when the download took over 30 s.',
      rateLimit: r.messages,
      query: emptyQuerySchema,
      success: { status: 200, schema: 'Media', description: 'The file.' },
      errors: [404, 409, 502, 504],
    }),
    'id',
  );
  const mediaOk = (media as { responses: Record<string, { content?: unknown }> }).responses['200']!;
  mediaOk.content = { '*/*': { schema: { type: 'string', format: 'binary' } } };
  return {
    '/messages': {
      get: operation({
        tag: 'Messages',
        summary: "The device's messages, newest first",
        description:
          'A page of records (outbound and inbound) filtered by `batchId`, `status` and `direction`, newest first; pass `nextCursor` as `cursor` for the next page. A filtered page reads at most 2,000 messages, so it may be short (even empty) while `nextCursor` is set.',
        rateLimit: r.messages,
        query: messagesQuerySchema,
        success: { status: 200, schema: 'MessagePage', description: 'A page.' },
        errors: [],
      }),
    },
    '/messages/{id}': {
      get: withPathParam(
        operation({
          tag: 'Messages',
          summary: 'A message and its status',
          description: "The record of a message of the token's device (kept MESSAGE_RETENTION_SECONDS).",
          rateLimit: r.messages,
          query: emptyQuerySchema,
          success: { status: 200, schema: 'MessageResult', description: 'The message.' },
          errors: [404],
        }),
        'id',
      ),
    },
    '/messages/{id}/media': { get: media },
  };
}
