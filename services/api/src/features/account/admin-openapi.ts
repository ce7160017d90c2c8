/** The account's admin routes in the admin document (admin.ts): the presence read. */
import { PRESENCE_STATES, emptyQuerySchema } from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { AdminOperationSpec } from '../../openapi/admin-operation.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { closed, timestamp } from '../../openapi/schema-helpers.js';
import type { AccountAdminName } from './admin.js';

const yes = { const: true } as const;

export function accountAdminOperations(
  _config: ApiConfig,
  op: (spec: AdminOperationSpec) => JsonSchema,
): Partial<Record<AccountAdminName, JsonSchema>> {
  return {
    adminGetPresence: op({
      tag: 'Account',
      summary: "The account's presence",
      description:
        'What PUT …/presence last set while the device is connected (and when); `unavailable` otherwise.',
      query: emptyQuerySchema,
      success: {
        status: 200,
        schema: closed(
          {
            success: yes,
            data: closed(
              {
                presence: { enum: [...PRESENCE_STATES] },
                setAt: timestamp('When it was set.'),
              },
              ['presence'],
            ),
          },
          ['success', 'data'],
        ),
        description: 'The presence.',
      },
      errors: [],
    }),
  };
}
