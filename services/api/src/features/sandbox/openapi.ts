/** The sandbox read in the admin document (admin.ts). */
import { emptyQuerySchema } from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { AdminOperationSpec } from '../../openapi/admin-operation.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { closed, str } from '../../openapi/schema-helpers.js';
import type { SandboxAdminName } from './admin.js';

export function sandboxAdminOperations(
  _config: ApiConfig,
  op: (spec: AdminOperationSpec) => JsonSchema,
): Record<SandboxAdminName, JsonSchema> {
  return {
    sandbox: op({
      tag: 'Console',
      summary: 'Whether the gateway runs against the simulator',
      description:
        "MESSENGER_SANDBOX_URL set: the simulator's phone-link URL (the linking panel shows the command); null otherwise.",
      query: emptyQuerySchema,
      success: {
        status: 200,
        schema: closed(
          {
            success: { const: true },
            sandbox: {
              anyOf: [
                closed({ phoneLinkUrl: str("The simulator's phone-link URL.") }, ['phoneLinkUrl']),
                { type: 'null' },
              ],
            },
          },
          ['success', 'sandbox'],
        ),
        description: 'The sandbox.',
      },
      errors: [],
    }),
  };
}
