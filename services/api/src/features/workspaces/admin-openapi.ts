/** The workspaces' admin routes in the admin document (admin.ts): the operator's side of workspaces. */
import { emptyQuerySchema } from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { AdminOperationSpec } from '../../openapi/admin-operation.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { closed, ref, str } from '../../openapi/schema-helpers.js';
import {
  adminTokenSchema,
  createWorkspaceSchema,
  updateWorkspaceSchema,
  type WorkspaceAdminName,
} from './admin.js';
import { usageQuerySchema } from './bodies.js';

const yes = { const: true } as const;

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
