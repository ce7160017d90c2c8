/** The pools' admin routes in the admin document (admin.ts): the Pools page. */
import { CONNECTION_STATUSES, emptyQuerySchema } from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { AdminOperationSpec } from '../../openapi/admin-operation.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { closed, ref, str } from '../../openapi/schema-helpers.js';
import { createPoolSchema, updatePoolSchema, type PoolAdminName } from './admin.js';
import type { PoolDeviceState } from './pool-views.js';

const yes = { const: true } as const;

/** Whether a pool device takes its share, or why it dropped out (pool-devices.ts). */
const SPREADS = [
  'taking',
  'not_linked',
  'restricted',
  'daily_cap',
  'low_health',
  'no_nct_salt',
] as const satisfies readonly PoolDeviceState['spread'][];
// Every spread the type has is listed (a new one fails the typecheck here).
const _every: Exclude<PoolDeviceState['spread'], (typeof SPREADS)[number]> extends never ? true : never =
  true;

export const poolAdminSchemas: Record<string, JsonSchema> = {
  AdminPoolDeviceState: closed(
    {
      deviceId: str('The device.'),
      status: { enum: [...CONNECTION_STATUSES] },
      linked: { type: 'boolean' },
      healthScore: {
        type: 'integer',
        minimum: 0,
        maximum: 100,
        description: 'Linked or connecting: its score.',
      },
      spread: {
        enum: [...SPREADS],
        description:
          "`taking` its share of the pool's lists, or why it dropped out (its waiting messages move).",
      },
    },
    ['deviceId', 'status', 'linked', 'spread'],
  ),
  AdminPool: closed(
    {
      id: str('The pool id.'),
      name: str('Its name.'),
      devices: { type: 'array', items: { type: 'string' }, description: 'Its devices, in the given order.' },
      workspace: str('The workspace it belongs to.'),
      otpFallback: {
        type: 'boolean',
        description:
          "Whether an OTP to one of its linked devices that WhatsApp pauses or restricts goes out through the pool's connected Cloud API device (docs/cloud-api.md).",
      },
      createdAt: str('When it was created.'),
      updatedAt: str('When it last changed.'),
      deviceStates: {
        type: 'array',
        items: ref('AdminPoolDeviceState'),
        description: 'Each device, in order.',
      },
    },
    ['id', 'name', 'devices', 'workspace', 'otpFallback', 'createdAt', 'updatedAt', 'deviceStates'],
  ),
};

const onePool = closed({ success: yes, pool: ref('AdminPool') }, ['success', 'pool']);

export function poolAdminOperations(
  _config: ApiConfig,
  op: (spec: AdminOperationSpec) => JsonSchema,
): Record<PoolAdminName, JsonSchema> {
  const tag = 'Pools' as const;
  return {
    listPools: op({
      tag,
      summary: 'Every pool',
      description: "Every pool (a console session: its workspace's), each device with its standing.",
      query: emptyQuerySchema,
      success: {
        status: 200,
        schema: closed({ success: yes, pools: { type: 'array', items: ref('AdminPool') } }, [
          'success',
          'pools',
        ]),
        description: 'The pools.',
      },
      errors: [],
    }),
    createPool: op({
      tag,
      summary: 'Create a pool',
      description:
        "A pool of the workspace's devices (the operator names the workspace: `default` when absent). 409 when the id is taken.",
      query: emptyQuerySchema,
      body: createPoolSchema,
      success: { status: 201, schema: onePool, description: 'The pool.' },
      errors: [409],
    }),
    getPool: op({
      tag,
      summary: 'One pool',
      description: 'The pool, each device with its standing.',
      query: emptyQuerySchema,
      success: { status: 200, schema: onePool, description: 'The pool.' },
      errors: [],
    }),
    updatePool: op({
      tag,
      summary: 'Change a pool',
      description: 'Its name, or its devices (the whole set, each of its workspace).',
      query: emptyQuerySchema,
      body: updatePoolSchema,
      success: { status: 200, schema: onePool, description: 'The pool.' },
      errors: [],
    }),
    deletePool: op({
      tag,
      summary: 'Delete a pool',
      description: '409 while API tokens send through it (`details` names each).',
      query: emptyQuerySchema,
      success: {
        status: 200,
        schema: closed({ success: yes, message: { const: 'Pool deleted' } }, ['success', 'message']),
        description: 'Deleted.',
      },
      errors: [409],
    }),
  };
}
