/** The events' admin routes in the admin document (admin.ts): the live views and a device's Events tab. */
import { BROKER_TRANSPORTS, emptyQuerySchema } from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import { mirrored, type AdminOperationSpec } from '../../openapi/admin-operation.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { closed, int, ref, str, timestamp } from '../../openapi/schema-helpers.js';
import { streamQuerySchema, type EventAdminName } from './admin.js';
import type { EventName } from './mount.js';
import { recentEventsQuerySchema } from './recent-events.js';

const yes = { const: true } as const;

/** One attempt of a webhook delivery, as the notifier records it (@mgw/store webhook-report.ts). */
const attempt = closed(
  {
    at: timestamp('When it ended.'),
    eventId: str('The event.'),
    type: str('Its type.'),
    outcome: str('delivered, retry, exhausted, gone, dropped or unreadable.'),
    attempt: { type: 'integer', minimum: 1, description: 'Its number (1: the first attempt).' },
    status: { type: 'integer', description: "The endpoint's HTTP status, when it answered." },
    error: str('Why it failed.'),
  },
  ['at', 'eventId', 'type', 'outcome', 'attempt'],
);

export const eventAdminSchemas: Record<string, JsonSchema> = {
  AdminBrokerOutlet: closed(
    {
      startedAt: timestamp('When the transport first ran on this install; absent: never (not configured).'),
      cursor: closed({ id: str('The last event published.'), at: timestamp('Its time.') }, ['id', 'at']),
      waiting: int('Events of the log after the cursor, not published yet.'),
      oldestWaitingAt: timestamp('When the oldest of them was written.'),
      lost: int('Events the log dropped before the transport published them.'),
      lastErrorAt: timestamp("When the device's last publish failed."),
      lastError: str('Why.'),
      failures: int('Failed publishes recorded.'),
    },
    ['failures'],
  ),
  AdminOutlets: closed(
    {
      webhook: closed(
        {
          endpoint: {
            anyOf: [ref('Webhook'), { type: 'null' }],
            description: 'The endpoint (never its secret); null: none.',
          },
          lastAttempt: attempt,
          lastDelivery: attempt,
          lastFailure: attempt,
          waiting: int('Events waiting for their first attempt.'),
          retries: closed(
            { count: int('Events waiting for a retry.'), nextDueAt: timestamp('When the earliest is due.') },
            ['count'],
          ),
          exhausted: int('Events dropped after their last attempt.'),
          retryNow: closed({ at: timestamp('When.'), count: int('Events made due.') }, ['at', 'count']),
        },
        ['endpoint', 'waiting', 'retries', 'exhausted'],
      ),
      brokers: closed(Object.fromEntries(BROKER_TRANSPORTS.map((t) => [t, ref('AdminBrokerOutlet')])), [
        ...BROKER_TRANSPORTS,
      ]),
    },
    ['webhook', 'brokers'],
  ),
};

export function eventAdminOperations(
  _config: ApiConfig,
  op: (spec: AdminOperationSpec) => JsonSchema,
  operations: Record<EventName, JsonSchema>,
): Partial<Record<EventAdminName, JsonSchema>> {
  const tag = 'Events' as const;
  return {
    adminEventStream: op({
      tag,
      summary: 'The live event stream',
      description:
        "Server-sent events of every device (a console session: its workspace's) or of `device`, from now (`after` or `Last-Event-ID` resume one device's stream); each event names its device.",
      query: streamQuerySchema,
      success: { stream: 'The events, as GET /events/stream sends them, each with its device.' },
      errors: [],
    }),
    adminDeviceEvents: mirrored(operations.list),
    adminRecentEvents: op({
      tag,
      summary: "The device's recent events",
      description: 'Its event log newest first; `before` pages to older events (`olderCursor`).',
      query: recentEventsQuerySchema,
      success: {
        status: 200,
        schema: closed(
          {
            success: yes,
            data: closed(
              {
                events: { type: 'array', items: ref('LoggedEvent') },
                olderCursor: {
                  type: ['string', 'null'],
                  description:
                    "`before` of the next (older) page; null once the window's oldest was reached.",
                },
              },
              ['events', 'olderCursor'],
            ),
          },
          ['success', 'data'],
        ),
        description: 'The events.',
      },
      errors: [],
    }),
    adminDeviceBrokers: mirrored(operations.getBrokers),
    adminEventOutlets: op({
      tag,
      summary: "Where the device's events went",
      description:
        'The webhook (its endpoint, last delivery and failure, retries waiting, events dropped) and each broker transport (its cursor, events waiting, last error).',
      query: emptyQuerySchema,
      success: {
        status: 200,
        schema: closed({ success: yes, data: ref('AdminOutlets') }, ['success', 'data']),
        description: 'The outlets.',
      },
      errors: [],
    }),
    adminRetryNow: op({
      tag,
      summary: 'Retry the webhook now',
      description:
        'Every event waiting for a webhook retry becomes due now, in its order. 404 without a webhook.',
      query: emptyQuerySchema,
      success: {
        status: 200,
        schema: closed(
          {
            success: yes,
            data: closed(
              { waiting: int('Events waiting for a retry.'), madeDue: int('Of those, not due before.') },
              ['waiting', 'madeDue'],
            ),
          },
          ['success', 'data'],
        ),
        description: 'Made due.',
      },
      errors: [],
    }),
  };
}
