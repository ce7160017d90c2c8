/** The device's webhook endpoint in the OpenAPI document: its operations and answers. */
import { EVENT_TYPES, emptyQuerySchema, webhookBodySchema } from '@mgw/contracts';
import type { Operations } from '../../http/route-table.js';
import type { OperationSpec } from '../../openapi/operation.js';
import { closed, str, timestamp } from '../../openapi/schema-helpers.js';
import type { ApiConfig } from '../../config.js';
import { mirrored, type AdminOperationSpec } from '../../openapi/admin-operation.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import type { WebhookAdminName } from './admin.js';

const yes = { const: true } as const;

export const webhookSchemas: Record<string, JsonSchema> = {
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
};

export function webhookOperations(
  config: ApiConfig,
  operation: (spec: OperationSpec) => JsonSchema,
): Operations<'get' | 'put' | 'remove'> {
  const rateLimit = config.rateLimits.webhook;
  return {
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
    remove: operation({
      tag: 'Events',
      summary: "Remove the device's webhook endpoint",
      description: 'Removes the endpoint; events not delivered yet are dropped.',
      rateLimit,
      query: emptyQuerySchema,
      success: { status: 200, schema: 'WebhookRemoved', description: 'Removed.' },
      errors: [404, 413],
    }),
  };
}

// --- The webhook's admin routes in the admin document (admin.ts): the public /webhook's, by device.

/** The admin rows serve the public handlers `get`, `put` and `remove`: their operations, mirrored. */
export function webhookAdminOperations(
  _config: ApiConfig,
  _op: (spec: AdminOperationSpec) => JsonSchema,
  operations: Record<'get' | 'put' | 'remove', JsonSchema>,
): Record<WebhookAdminName, JsonSchema> {
  return {
    adminGetWebhook: mirrored(operations.get),
    adminPutWebhook: mirrored(operations.put),
    adminDeleteWebhook: mirrored(operations.remove),
  };
}
