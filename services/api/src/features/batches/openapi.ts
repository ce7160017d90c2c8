/** A device's batches and their control in the OpenAPI document. */
import {
  BATCH_STATES,
  ERRORS,
  MESSAGE_STATUSES,
  batchesQuerySchema,
  emptyQuerySchema,
  HELD_REASONS,
} from '@mgw/contracts';
import type { Operations } from '../../http/route-table.js';
import { withPathParam, type OperationSpec } from '../../openapi/operation.js';
import { closed, ref, result, str, timestamp } from '../../openapi/schema-helpers.js';
import type { BatchName } from './mount.js';
import type { ApiConfig } from '../../config.js';
import type { AdminOperationSpec } from '../../openapi/admin-operation.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import type { BatchAdminName } from './admin.js';

/** A batch as GET /batches/{batchId} answers it (a device's, or a pool's with its devices' parts). */
const batch = closed(
  {
    batchId: { type: 'string' },
    total: { type: 'integer', minimum: 1 },
    state: {
      enum: [...BATCH_STATES],
      description:
        '`active` (sending), `paused` (POST …/pause: nothing more is sent until …/resume), `cancelled` (POST …/cancel: nothing more is sent; the unsent messages end `failed` / `cancelled`), `completed` (no message is queued). A cancelled list stays `cancelled` once its messages are final.',
    },
    counts: {
      ...closed(
        {
          ...Object.fromEntries(MESSAGE_STATUSES.map((st) => [st, { type: 'integer', minimum: 0 }])),
          held: {
            type: 'integer',
            minimum: 0,
            description:
              'Of the `queued` ones, how many the sender holds now (their records show `held`); not part of the sum.',
          },
        },
        [...MESSAGE_STATUSES, 'held'],
      ),
      description:
        'Messages of the list by status; the statuses sum to `total`, and `held` is a subset of `queued`. `scheduled`: not due yet (a scheduled list before its `sendAt`).',
    },
    createdAt: timestamp('Accepted.'),
    sendAt: timestamp('A scheduled list: when it is due.'),
    completedAt: timestamp('When the last message left `queued` (sent or failed).'),
    pausedAt: timestamp('While `paused`: when the pause began.'),
    cancelledAt: timestamp('When it was cancelled.'),
    poolId: str('A list sent through a pool (a pool token): its pool (docs/pools.md).'),
    devices: {
      type: 'array',
      description:
        "A pooled list: each device that holds part of it, with its part's counts (a message moved counts where it went).",
      items: closed(
        {
          deviceId: { type: 'string' },
          total: { type: 'integer', minimum: 0 },
          counts: { type: 'object', additionalProperties: { type: 'integer', minimum: 0 } },
        },
        ['deviceId', 'total', 'counts'],
      ),
    },
    moved: {
      type: 'integer',
      minimum: 0,
      description: 'A pooled list: messages moved off a device that dropped out of the pool.',
    },
  },
  ['batchId', 'total', 'state', 'counts', 'createdAt'],
);

export const batchSchemas: Record<string, JsonSchema> = {
  Batch: batch,
  BatchResult: result(ref('Batch')),
  BatchPage: result(
    closed(
      {
        batches: { type: 'array', items: ref('Batch') },
        nextCursor: str('The `cursor` of the next (older) page; absent on the last one.'),
      },
      ['batches'],
    ),
  ),
};

/** The operation of each public batch route, by its handler's name (mount.ts). */
export function batchOperations(
  config: ApiConfig,
  operation: (spec: OperationSpec) => JsonSchema,
): Operations<BatchName> {
  const r = config.rateLimits;
  const control = (summary: string, description: string) =>
    withPathParam(
      operation({
        tag: 'Messages',
        summary,
        description,
        rateLimit: r.messages,
        query: emptyQuerySchema,
        success: { status: 200, schema: 'BatchResult', description: 'The list after the change.' },
        errors: [404, 409, 413],
      }),
      'batchId',
    );
  return {
    listBatches: operation({
      tag: 'Messages',
      summary: "The device's lists, newest first",
      description:
        'A page of lists (each as GET /batches/{batchId} answers it), newest first; pass `nextCursor` as `cursor` for the next page. Lists are kept as long as message records (MESSAGE_RETENTION_SECONDS).',
      rateLimit: r.messages,
      query: batchesQuerySchema,
      success: { status: 200, schema: 'BatchPage', description: 'A page.' },
      errors: [],
    }),
    getBatch: withPathParam(
      operation({
        tag: 'Messages',
        summary: "A list's progress",
        description:
          'The state of a list (the `messageId` /send answered for it) and counts of its messages by status; they always sum to `total`, and `counts.held` (how many queued ones are held now) is a subset of `queued`. `completedAt` is set once no message is queued.',
        rateLimit: r.messages,
        query: emptyQuerySchema,
        success: { status: 200, schema: 'BatchResult', description: 'The counts.' },
        errors: [404],
      }),
      'batchId',
    ),
    pauseBatch: control(
      'Pause a list',
      'Nothing more of the list is sent until it is resumed: its queued messages wait (`held.reason` `batch_paused`). A message whose send already started (handed to the socket) may still go. **Choice:** pausing a paused list is a 200 that changes nothing; a completed list answers 409 `' +
        ERRORS.batchCompleted +
        '` and a cancelled one 409 `' +
        ERRORS.batchCancelled +
        '`. Emits `batch.paused`.',
    ),
    resumeBatch: control(
      'Resume a paused list',
      'Its held messages go back to the queue at once and are sent as before (caps, pacing and quiet hours still apply). **Choice:** resuming an active list is a 200 that changes nothing; a completed list answers 409 `' +
        ERRORS.batchCompleted +
        '` and a cancelled one 409 `' +
        ERRORS.batchCancelled +
        '`. Emits `batch.resumed`.',
    ),
    cancelBatch: control(
      'Cancel a list',
      'Every message of the list not yet sent ends `failed` with `error: "cancelled"`: once this answers, none of them reaches a contact (also after a sender failover). A message whose send had already started when the cancel arrived may still be sent (its record then reads `sent`). **Choice:** cancelling a cancelled list is a 200 (it finishes a cancel cut short); a completed list answers 409 `' +
        ERRORS.batchCompleted +
        '`. Emits `batch.cancelled`.',
    ),
  };
}

// --- The batches' admin routes in the admin document (admin.ts): the Campaigns page's lists.

const yes = { const: true } as const;

/** A batch as the Campaigns page lists it: the public batch, why its held messages wait, a broadcast's kind. */
function deviceBatch(): JsonSchema {
  const batch = batchSchemas.Batch as { properties: Record<string, JsonSchema>; required: string[] };
  return closed(
    {
      ...batch.properties,
      heldReasons: {
        type: 'array',
        description: 'Why some of its held messages wait (read on a few of them), earliest `until` first.',
        items: closed({ reason: { enum: [...HELD_REASONS] }, until: timestamp('When the hold ends.') }, [
          'reason',
          'until',
        ]),
      },
      broadcast: {
        enum: ['status', 'channel'],
        description: 'A status update or a channel post: a batch of one, not a list of recipients.',
      },
    },
    batch.required,
  );
}

export const batchAdminSchemas: Record<string, JsonSchema> = {
  AdminDeviceBatch: deviceBatch(),
  AdminDeviceBatchPage: closed(
    {
      batches: { type: 'array', items: ref('AdminDeviceBatch') },
      nextCursor: str('The `cursor` of the next (older) page; absent on the last one.'),
    },
    ['batches'],
  ),
};

export function batchAdminOperations(
  _config: ApiConfig,
  op: (spec: AdminOperationSpec) => JsonSchema,
): Partial<Record<BatchAdminName, JsonSchema>> {
  const tag = 'Messages' as const;
  return {
    adminDeviceBatches: op({
      tag,
      summary: "The device's batches",
      description: 'Its lists newest first, each with its counts, why its held messages wait, and its kind.',
      query: batchesQuerySchema,
      success: {
        status: 200,
        schema: closed({ success: yes, data: ref('AdminDeviceBatchPage') }, ['success', 'data']),
        description: 'A page of batches.',
      },
      errors: [],
    }),
    adminDeviceBatch: op({
      tag,
      summary: 'One batch of the device',
      description: 'The batch as GET /batches/{batchId} answers it.',
      query: emptyQuerySchema,
      success: {
        status: 200,
        schema: closed({ success: yes, batch: ref('Batch') }, ['success', 'batch']),
        description: 'The batch.',
      },
      errors: [],
    }),
  };
}
