/** A device's hourly activity in the admin document (admin.ts). */
import { ACTIVITY_STATUSES } from '@mgw/store';
import type { ApiConfig } from '../../config.js';
import type { AdminOperationSpec } from '../../openapi/admin-operation.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { closed, int, str } from '../../openapi/schema-helpers.js';
import { activityQuerySchema, type ActivityAdminName } from './admin.js';

const counts = Object.fromEntries(ACTIVITY_STATUSES.map((s) => [s, int(`Messages ${s}.`)]));

export const activityAdminSchemas: Record<string, JsonSchema> = {
  AdminActivityHour: closed({ hour: str('The start of the UTC hour (ISO).'), ...counts }, [
    'hour',
    ...ACTIVITY_STATUSES,
  ]),
  AdminActivityTotals: closed(counts, [...ACTIVITY_STATUSES]),
};

export function activityAdminOperations(
  _config: ApiConfig,
  op: (spec: AdminOperationSpec) => JsonSchema,
): Record<ActivityAdminName, JsonSchema> {
  return {
    deviceActivity: op({
      tag: 'Sending',
      summary: "The device's sending per hour",
      description:
        'The last `hours` UTC hours up to the current one, oldest first, zero-filled: messages sent, delivered, read and failed in each, and the totals.',
      query: activityQuerySchema,
      success: {
        status: 200,
        schema: closed(
          {
            success: { const: true },
            deviceId: str('The device.'),
            hours: { type: 'array', items: { $ref: '#/components/schemas/AdminActivityHour' } },
            totals: { $ref: '#/components/schemas/AdminActivityTotals' },
          },
          ['success', 'deviceId', 'hours', 'totals'],
        ),
        description: 'The hours.',
      },
      errors: [],
    }),
  };
}
