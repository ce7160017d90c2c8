/** The tokens' admin routes in the admin document (admin.ts). */
import { emptyQuerySchema } from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { AdminOperationSpec } from '../../openapi/admin-operation.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { closed, ref, str, timestamp } from '../../openapi/schema-helpers.js';
import type { TokenAdminName } from './admin.js';

const yes = { const: true } as const;

export const tokenAdminSchemas: Record<string, JsonSchema> = {
  AdminToken: closed(
    {
      kind: {
        enum: ['api', 'admin'],
        description:
          '`api`: the public API (`tok_…`); `admin`: the admin API (`adm_…`, made by the token CLI).',
      },
      id: str('The token id (never its value).'),
      name: str('Its name.'),
      deviceId: str('The device it acts on.'),
      poolId: str('The pool it sends through (never with deviceId).'),
      workspaceId: str('Its workspace (absent: default).'),
      createdAt: timestamp('When it was created.'),
      expiresAt: timestamp('When it expires.'),
      expired: { type: 'boolean' },
      lastUsedAt: timestamp('When it last authenticated, to within a minute; absent when never.'),
    },
    ['kind', 'id', 'name', 'createdAt', 'expired'],
  ),
};

export function tokenAdminOperations(
  _config: ApiConfig,
  op: (spec: AdminOperationSpec) => JsonSchema,
): Record<TokenAdminName, JsonSchema> {
  const tag = 'Tokens' as const;
  return {
    listTokens: op({
      tag,
      summary: 'Every token',
      description:
        "API and admin tokens (a console session: its workspace's API tokens), the most recently used first, never a value.",
      query: emptyQuerySchema,
      success: {
        status: 200,
        schema: closed({ success: yes, tokens: { type: 'array', items: ref('AdminToken') } }, [
          'success',
          'tokens',
        ]),
        description: 'The tokens.',
      },
      errors: [],
    }),
    createToken: op({
      tag,
      summary: 'Create an API token',
      description:
        'For a device, a pool, or (a console session) its workspace; the value is in this answer only. 400 `Pool not found` or `Device not found` naming the field.',
      query: emptyQuerySchema,
      // The schema says it in words: joi's `when` on poolId has no JSON Schema translation here.
      body: {
        ...closed(
          {
            name: str('Its name (1 to 100 characters).'),
            deviceId: str('The device it acts on (empty: none).'),
            poolId: str('The pool it sends through (empty: none); not with deviceId.'),
            expiresIn: str('Its lifetime, `<n>s|m|h|d` (empty: never).'),
          },
          ['name'],
        ),
        not: {
          required: ['deviceId', 'poolId'],
          properties: { deviceId: { minLength: 1 }, poolId: { minLength: 1 } },
        },
      },
      success: {
        status: 201,
        schema: closed(
          { success: yes, token: ref('AdminToken'), value: str('The token: shown here only, never again.') },
          ['success', 'token', 'value'],
        ),
        description: 'The token and its value.',
      },
      errors: [],
    }),
    revokeToken: op({
      tag,
      summary: 'Revoke a token',
      description: 'An API or an admin token by its id (a console session: an API token of its workspace).',
      query: emptyQuerySchema,
      success: { status: 200, schema: closed({ success: yes }, ['success']), description: 'Revoked.' },
      errors: [],
    }),
  };
}
