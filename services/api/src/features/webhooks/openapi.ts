/** The device's webhook endpoint in the OpenAPI document. */
import { emptyQuerySchema, webhookBodySchema } from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import type { OperationSpec } from '../../openapi/operation.js';

export function webhookPaths(config: ApiConfig, operation: (spec: OperationSpec) => JsonSchema) {
  const rateLimit = config.rateLimits.webhook;
  return {
    '/webhook': {
      get: operation({
        tag: 'Events',
        summary: "The device's webhook endpoint",
        description: 'The endpoint, without its secret.',
        rateLimit,
        query: emptyQuerySchema,
        success: { status: 200, schema: 'WebhookResult', description: 'The endpoint.' },
        errors: [404],
      }),
      put: operation({
        tag: 'Events',
        summary: "Set the device's webhook endpoint",
        description:
          'Events are POSTed to `url`, signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`), retried with backoff for about a day until a 2xx; `410 Gone` disables the endpoint. The secret is answered when the endpoint is created and when `rotateSecret` is true (the previous one keeps signing for WEBHOOK_SECRET_OVERLAP_SECONDS).',
        rateLimit,
        query: emptyQuerySchema,
        body: webhookBodySchema,
        success: { status: 200, schema: 'WebhookResult', description: 'The endpoint.' },
        errors: [413],
      }),
      delete: operation({
        tag: 'Events',
        summary: "Remove the device's webhook endpoint",
        description: 'Removes the endpoint; events not delivered yet are dropped.',
        rateLimit,
        query: emptyQuerySchema,
        success: { status: 200, schema: 'WebhookRemoved', description: 'Removed.' },
        errors: [404, 413],
      }),
    },
  };
}
