/** The batches' admin routes in the admin document (admin.ts): the Campaigns page's lists. */
import { HELD_REASONS, batchesQuerySchema, emptyQuerySchema } from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { AdminOperationSpec } from '../../openapi/admin-operation.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { closed, ref, str, timestamp } from '../../openapi/schema-helpers.js';
import type { BatchAdminName } from './admin.js';
import { batchSchemas } from './openapi.js';

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
