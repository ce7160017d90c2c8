/** POST /send in the OpenAPI document (its long description: send-description.ts). */
import { emptyQuerySchema, sendBodySchema } from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import type { OperationSpec } from '../../openapi/operation.js';
import { SEND_DESCRIPTION } from './send-description.js';

export function sendPaths(config: ApiConfig, operation: (spec: OperationSpec) => JsonSchema) {
  return {
    '/send': {
      post: operation({
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
    },
  };
}
