/** A workspace as its workspace token sees it, in the OpenAPI document (docs/workspaces.md). */
import { emptyQuerySchema } from '@mgw/contracts';
import { QUOTA_NAMES } from '@mgw/store';
import type { ApiConfig } from '../../config.js';
import type { Operations } from '../../http/route-table.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { withPathParam, type OperationSpec } from '../../openapi/operation.js';
import { closed, int, ref, result, str, timestamp } from '../../openapi/schema-helpers.js';
import { workspaceTokenSchema } from './bodies.js';
import type { WorkspaceName } from './mount.js';

const yes = { const: true } as const;

export const workspaceSchemas: Record<string, JsonSchema> = {
  Workspace: closed(
    {
      id: str('The workspace id (a slug the operator chose).'),
      name: str('Its name.'),
      status: { enum: ['active', 'suspended'], description: "A suspended workspace's tokens get 403." },
      quotas: closed(
        Object.fromEntries(QUOTA_NAMES.map((n) => [n, int(`The ${n} quota; absent: no limit.`)])),
        [],
      ),
      devices: int('Devices it owns.'),
      createdAt: timestamp('When it was created.'),
      updatedAt: timestamp('When it last changed.'),
    },
    ['id', 'name', 'status', 'quotas', 'devices', 'createdAt', 'updatedAt'],
  ),
  WorkspaceDevice: closed(
    {
      deviceId: str('The device id: name it in paths as /api/messenger/v1/devices/{deviceId}/….'),
      status: { enum: ['connected', 'connecting', 'disconnected'], description: 'As GET /status says.' },
      phone: str('The linked number.'),
      name: str("The account's name."),
    },
    ['deviceId', 'status'],
  ),
  WorkspaceToken: closed(
    {
      kind: { const: 'api' },
      id: str('The token id (never its value).'),
      name: str('Its name.'),
      deviceId: str('The device it acts on; absent: a workspace token.'),
      poolId: str('The pool it sends through.'),
      workspaceId: str('Its workspace.'),
      createdAt: timestamp('When it was created.'),
      expiresAt: timestamp('When it expires.'),
      expired: { type: 'boolean', description: 'Whether it has expired.' },
      lastUsedAt: timestamp('When it last authenticated (to the minute).'),
    },
    ['kind', 'id', 'name', 'createdAt', 'expired'],
  ),
  WorkspaceResult: result(ref('Workspace')),
  WorkspaceDeviceResult: result(ref('WorkspaceDevice')),
  WorkspaceDeviceList: result({ type: 'array', items: ref('WorkspaceDevice') }),
  WorkspaceTokenList: result({ type: 'array', items: ref('WorkspaceToken') }),
  WorkspaceTokenCreated: result(
    closed({ token: ref('WorkspaceToken'), value: str('The token: shown here only, never again.') }, [
      'token',
      'value',
    ]),
  ),
  WorkspaceTokenRevoked: closed({ success: yes }, ['success']),
};

export function workspaceOperations(
  config: ApiConfig,
  operation: (spec: OperationSpec) => JsonSchema,
): Operations<WorkspaceName> {
  const read = config.rateLimits.status;
  const change = config.rateLimits.connect;
  const tag = 'Workspace' as const;
  return {
    getWorkspace: operation({
      tag,
      summary: "The token's workspace",
      description: 'Its name, status, quotas and device count. A workspace token only.',
      rateLimit: read,
      query: emptyQuerySchema,
      success: { status: 200, schema: 'WorkspaceResult', description: 'The workspace.' },
      errors: [404],
    }),
    listDevices: operation({
      tag,
      summary: "The workspace's devices",
      description: 'Each device it owns, with its status. A workspace token only.',
      rateLimit: read,
      query: emptyQuerySchema,
      success: { status: 200, schema: 'WorkspaceDeviceList', description: 'The devices, by id.' },
      errors: [],
    }),
    createDevice: operation({
      tag,
      summary: 'Create a device',
      description:
        'A new device of the workspace, within its device quota (429 past it, `details` naming the quota): its id is drawn at random. Link it with POST /api/messenger/v1/devices/{deviceId}/connect. No body.',
      rateLimit: change,
      success: { status: 201, schema: 'WorkspaceDeviceResult', description: 'The device, not linked yet.' },
      errors: [404, 413],
    }),
    getDevice: withPathParam(
      operation({
        tag,
        summary: 'One device of the workspace',
        description: "A device of the workspace by id; any other id is 404, whoever's it is.",
        rateLimit: read,
        query: emptyQuerySchema,
        success: { status: 200, schema: 'WorkspaceDeviceResult', description: 'The device.' },
        errors: [404],
      }),
      'deviceId',
    ),
    listTokens: operation({
      tag,
      summary: "The workspace's tokens",
      description: 'Every token of the workspace, newest first, never a value.',
      rateLimit: read,
      query: emptyQuerySchema,
      success: { status: 200, schema: 'WorkspaceTokenList', description: 'The tokens.' },
      errors: [],
    }),
    createToken: operation({
      tag,
      summary: 'Create a token of the workspace',
      description:
        'A device token (`deviceId`: a device of the workspace; another id is 404) or, without `deviceId`, a workspace token. The value is in this answer only.',
      rateLimit: change,
      query: emptyQuerySchema,
      body: workspaceTokenSchema,
      success: { status: 201, schema: 'WorkspaceTokenCreated', description: 'The token and its value.' },
      errors: [404, 413],
    }),
    revokeToken: withPathParam(
      operation({
        tag,
        summary: 'Revoke a token of the workspace',
        description: 'Revokes it at once; a token of another workspace is 404.',
        rateLimit: change,
        query: emptyQuerySchema,
        success: { status: 200, schema: 'WorkspaceTokenRevoked', description: 'Revoked.' },
        errors: [404, 413],
      }),
      'tokenId',
    ),
  };
}
