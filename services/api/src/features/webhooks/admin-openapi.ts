/** The webhook's admin routes in the admin document (admin.ts): the public /webhook's, by device. */
import type { ApiConfig } from '../../config.js';
import { mirrored, type AdminOperationSpec } from '../../openapi/admin-operation.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import type { WebhookAdminName } from './admin.js';

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
