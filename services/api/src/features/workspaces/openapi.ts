/** A workspace as its workspace token sees it, in the OpenAPI document (docs/workspaces.md). */
import { QUOTA_NAMES, USAGE_COUNTS, USAGE_MAX_DAYS } from '@mgw/store';
import type { Operations } from '../../http/route-table.js';
import { withPathParam, type OperationSpec } from '../../openapi/operation.js';
import { closed, int, ref, result, str, timestamp } from '../../openapi/schema-helpers.js';
import { usageQuerySchema, workspaceTokenSchema } from './bodies.js';
import type { WorkspaceName } from './mount.js';
import { emptyQuerySchema } from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { AdminOperationSpec } from '../../openapi/admin-operation.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import {
  adminTokenSchema,
  createWorkspaceSchema,
  updateWorkspaceSchema,
  type WorkspaceAdminName,
} from './admin.js';

const yes = { const: true } as const;

/** What each count of a day's usage is (docs/workspaces.md "Usage"). */
const USAGE_HELP: Record<(typeof USAGE_COUNTS)[number], string> = {
  accepted: 'Messages accepted (every kind; a retry of an idempotent request is not counted again).',
  otp: 'OTP messages accepted (also counted in accepted).',
  sent: 'Messages that reached WhatsApp that day.',
  delivered: 'Messages delivered that day.',
  read: 'Messages read that day.',
  failed: 'Messages that ended failed that day.',
  received: 'Messages contacts wrote to its devices.',
  mediaBytes: 'Bytes of media stored (uploads and inbound media kept).',
};

/** A usage's counts (a day's, or a range's sums). */
const USAGE_PROPERTIES: Record<string, JsonSchema> = {
  ...Object.fromEntries(USAGE_COUNTS.map((c) => [c, int(USAGE_HELP[c])])),
  failedByReason: {
    type: 'object',
    additionalProperties: { type: 'integer' },
    description: 'The failures by reason (the `error` of their records), only the reasons that happened.',
  },
};
const USAGE_REQUIRED = [...USAGE_COUNTS, 'failedByReason'];

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
  UsageCounts: closed(USAGE_PROPERTIES, USAGE_REQUIRED),
  UsageDay: closed({ day: str('The UTC day, YYYY-MM-DD.'), ...USAGE_PROPERTIES }, ['day', ...USAGE_REQUIRED]),
  WorkspaceUsage: closed(
    {
      workspaceId: str('The workspace.'),
      from: str('The first day (UTC).'),
      to: str('The last day (UTC).'),
      days: { type: 'array', items: ref('UsageDay'), description: 'Each day of the range, oldest first.' },
      total: ref('UsageCounts'),
    },
    ['workspaceId', 'from', 'to', 'days', 'total'],
  ),
  WorkspaceUsageResult: result(ref('WorkspaceUsage')),
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
    getUsage: operation({
      tag,
      summary: "The workspace's usage per day",
      description: `What its devices did per UTC day, from \`from\` to \`to\` (YYYY-MM-DD; default: the 30 days to today; at most ${USAGE_MAX_DAYS} days): accepted, OTPs, sent, delivered, read, failed (and by reason), received, media bytes. \`format=csv\` answers CSV for billing. A workspace token only.`,
      rateLimit: read,
      query: usageQuerySchema,
      success: {
        status: 200,
        schema: 'WorkspaceUsageResult',
        description: 'The usage.',
        csv: 'With format=csv: a header row, then one row per day (workspace, day, the counts, then failed:<reason> for every reason).',
      },
      errors: [],
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

// --- The workspaces' admin routes in the admin document (admin.ts): the operator's side of workspaces.

const oneWorkspace = closed({ success: yes, workspace: ref('Workspace') }, ['success', 'workspace']);
const itsDevices = closed({ success: yes, devices: { type: 'array', items: ref('WorkspaceDevice') } }, [
  'success',
  'devices',
]);

export function workspaceAdminOperations(
  _config: ApiConfig,
  op: (spec: AdminOperationSpec) => JsonSchema,
): Record<WorkspaceAdminName, JsonSchema> {
  const tag = 'Workspaces' as const;
  return {
    listWorkspaces: op({
      tag,
      summary: 'Every workspace',
      description: 'Every workspace (a console session: its own), with how many devices it owns.',
      query: emptyQuerySchema,
      success: {
        status: 200,
        schema: closed({ success: yes, workspaces: { type: 'array', items: ref('Workspace') } }, [
          'success',
          'workspaces',
        ]),
        description: 'The workspaces.',
      },
      errors: [],
    }),
    createWorkspace: op({
      tag,
      summary: 'Create a workspace',
      description: 'A workspace with its id, name and quotas. 409 when the id is taken.',
      query: emptyQuerySchema,
      body: createWorkspaceSchema,
      success: { status: 201, schema: oneWorkspace, description: 'The workspace.' },
      errors: [409],
    }),
    getWorkspaceAdmin: op({
      tag,
      summary: 'One workspace',
      description: 'Its name, status, quotas and device count.',
      query: emptyQuerySchema,
      success: { status: 200, schema: oneWorkspace, description: 'The workspace.' },
      errors: [],
    }),
    updateWorkspace: op({
      tag,
      summary: 'Change a workspace',
      description: 'Its name, its status (suspend, resume) or its quotas (null: no limit any more).',
      query: emptyQuerySchema,
      body: updateWorkspaceSchema,
      success: { status: 200, schema: oneWorkspace, description: 'The workspace.' },
      errors: [],
    }),
    workspaceDevices: op({
      tag,
      summary: "The workspace's devices",
      description: 'Each device it owns, with its status.',
      query: emptyQuerySchema,
      success: { status: 200, schema: itsDevices, description: 'The devices.' },
      errors: [],
    }),
    workspaceUsage: op({
      tag,
      summary: "The workspace's usage per day",
      description:
        'As its workspace token reads it (GET /api/messenger/v1/workspace/usage); `format=csv` answers CSV.',
      query: usageQuerySchema,
      success: {
        status: 200,
        schema: closed({ success: yes, usage: ref('WorkspaceUsage') }, ['success', 'usage']),
        description: 'The usage.',
        csv: 'With format=csv: a header row, then one row per day.',
      },
      errors: [],
    }),
    createWorkspaceDevice: op({
      tag,
      summary: 'Create a device of the workspace',
      description: 'A device with a random id, within its device quota (429 past it).',
      query: emptyQuerySchema,
      success: {
        status: 201,
        schema: closed({ success: yes, device: ref('WorkspaceDevice') }, ['success', 'device']),
        description: 'The device, not linked yet.',
      },
      errors: [413],
    }),
    giveDevice: op({
      tag,
      summary: 'Give a device to the workspace',
      description:
        'The device the operator names becomes the workspace\u2019s (409 when another workspace has it, or default uses it; 429 past its device quota).',
      query: emptyQuerySchema,
      success: { status: 200, schema: itsDevices, description: "The workspace's devices." },
      errors: [409, 413],
    }),
    createWorkspaceToken: op({
      tag,
      summary: 'Create a token of the workspace',
      description: 'A device, pool or workspace token of it; the value is in this answer only.',
      query: emptyQuerySchema,
      body: adminTokenSchema,
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
  };
}
