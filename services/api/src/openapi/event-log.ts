/** GET /events and its answer in the OpenAPI document (see docs/events.md, "The event log and GET /events"). */
import { EVENT_TYPES, eventsQuerySchema } from '@mgw/contracts';
import type { ApiConfig } from '../config.js';
import type { JsonSchema } from './joi-schema.js';
import type { OperationSpec } from './document.js';

const closed = (properties: Record<string, JsonSchema>, required: string[]): JsonSchema => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});
const cursor = (description: string): JsonSchema => ({
  type: 'string',
  pattern: '^\\d{1,15}-\\d{1,19}$',
  description,
});

export const eventLogSchemas: Record<string, JsonSchema> = {
  LoggedEvent: closed(
    {
      cursor: cursor('Where this event sits in the log: pass it as `after` to read what came after it.'),
      id: {
        type: 'string',
        description: "The event's id (a webhook's `webhook-id`: the same event, the same id).",
      },
      type: { type: 'string', enum: [...EVENT_TYPES] },
      timestamp: { type: 'string', format: 'date-time', description: 'When it happened.' },
      data: {
        type: 'object',
        properties: { deviceId: { type: 'string' } },
        required: ['deviceId'],
        description: "The event's data, as a webhook receives it (docs/events.md).",
      },
    },
    ['cursor', 'id', 'type', 'timestamp', 'data'],
  ),
  EventPage: closed(
    {
      success: { const: true },
      data: closed(
        {
          events: { type: 'array', items: { $ref: '#/components/schemas/LoggedEvent' } },
          nextCursor: {
            ...cursor(
              'Pass it as `after` next time: the last event looked at (a `types` filter may have skipped it), or the `after` given when nothing came; `null` when the log is empty and no `after` was given.',
            ),
            type: ['string', 'null'],
          },
          truncated: {
            const: true,
            description:
              'Present when `after` is older than what the log still holds (retention window or size bound): events after it were dropped, and the page starts at the oldest one kept.',
          },
        },
        ['events', 'nextCursor'],
      ),
    },
    ['success', 'data'],
  ),
};

export function eventLogOperation(
  config: ApiConfig,
  operation: (spec: OperationSpec) => JsonSchema,
): JsonSchema {
  const hours = config.eventLog.retentionMs / 3_600_000;
  return operation({
    tag: 'Events',
    summary: "The device's events, oldest first (pull)",
    description:
      `Every event of the device (the types a webhook gets, whether a webhook is set and wants them or not), oldest first, after \`after\`: pass the answer's \`nextCursor\` as \`after\` to read on. Events are kept ${hours} h (EVENT_LOG_RETENTION_HOURS) and at most 100,000 per device. ` +
      "The cursor is opaque: use one an answer gave. A cursor older than the log holds answers from the oldest event kept, with `truncated: true`. Data that holds message text is sealed at rest and opened for the answer. A pool token is refused (403): the log is one device's.",
    rateLimit: config.rateLimits.messages,
    query: eventsQuerySchema,
    success: { status: 200, schema: 'EventPage', description: 'A page of events.' },
    errors: [],
  });
}
