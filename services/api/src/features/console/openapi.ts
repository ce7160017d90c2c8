/** A workspace's console users in the admin document (admin.ts). */
import { emptyQuerySchema } from '@mgw/contracts';
import { CONSOLE_ROLES } from '@mgw/store';
import type { ApiConfig } from '../../config.js';
import type { AdminOperationSpec } from '../../openapi/admin-operation.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { closed, ref, str, timestamp } from '../../openapi/schema-helpers.js';
import { addUserSchema, changeUserSchema, type ConsoleAdminName } from './admin.js';

const yes = { const: true } as const;

export const consoleAdminSchemas: Record<string, JsonSchema> = {
  AdminConsoleUser: closed(
    {
      user: str('The login name, unique in the install.'),
      workspace: str('Its workspace.'),
      role: { enum: [...CONSOLE_ROLES] },
      createdAt: timestamp('When it was added.'),
      updatedAt: timestamp('When its password or role last changed.'),
    },
    ['user', 'workspace', 'role', 'createdAt', 'updatedAt'],
  ),
};

const oneUser = closed({ success: yes, user: ref('AdminConsoleUser') }, ['success', 'user']);

export function consoleAdminOperations(
  _config: ApiConfig,
  op: (spec: AdminOperationSpec) => JsonSchema,
): Record<ConsoleAdminName, JsonSchema> {
  const tag = 'Workspaces' as const;
  return {
    listUsers: op({
      tag,
      summary: "The workspace's console users",
      description: 'Who signs in to its console, never a password.',
      query: emptyQuerySchema,
      success: {
        status: 200,
        schema: closed({ success: yes, users: { type: 'array', items: ref('AdminConsoleUser') } }, [
          'success',
          'users',
        ]),
        description: 'The users.',
      },
      errors: [],
    }),
    addUser: op({
      tag,
      summary: 'Add a console user',
      description:
        'Its name (unique in the install: 409 when taken), password and role; 429 past the users limit.',
      query: emptyQuerySchema,
      body: addUserSchema,
      success: { status: 201, schema: oneUser, description: 'The user.' },
      errors: [409],
    }),
    changeUser: op({
      tag,
      summary: 'Change a console user',
      description: 'Its password or role (its sessions end). 409 for one\u2019s own role.',
      query: emptyQuerySchema,
      body: changeUserSchema,
      success: { status: 200, schema: oneUser, description: 'The user.' },
      errors: [409],
    }),
    removeUser: op({
      tag,
      summary: 'Remove a console user',
      description: 'Its sessions end. 409 for one\u2019s own user.',
      query: emptyQuerySchema,
      success: { status: 200, schema: closed({ success: yes }, ['success']), description: 'Removed.' },
      errors: [409],
    }),
  };
}
