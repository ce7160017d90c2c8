/** POST /send in the OpenAPI document (its long description: send-description.ts), and its answers. */
import { emptyQuerySchema, sendBodySchema } from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { Operations } from '../../http/route-table.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import type { OperationSpec } from '../../openapi/operation.js';
import { closed, str } from '../../openapi/schema-helpers.js';
import { SEND_DESCRIPTION } from './send-description.js';

const yes = { const: true } as const;

export const sendSchemas: Record<string, JsonSchema> = {
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
};

export function sendOperations(
  config: ApiConfig,
  operation: (spec: OperationSpec) => JsonSchema,
): Operations<'send'> {
  return {
    send: operation({
      tag: 'Messages',
      summary: 'Send a message (text and/or attachment) to one recipient or a list',
      description: SEND_DESCRIPTION,
      rateLimit: config.rateLimits.send,
      query: emptyQuerySchema,
      body: sendBodySchema(config.maxRecipients),
      idempotent: true,
      success: { status: 202, schema: 'SendResult', description: 'Queued.' },
      alsoSuccess: {
        status: 200,
        schema: 'SendDeleted',
        description: '`delete` of a message still queued: taken out of the queue, never sent.',
      },
      errors: [404, 409, 413, 422, 502, 504],
    }),
  };
}
