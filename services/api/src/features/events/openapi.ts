/**
 * GET /events, the two streams and GET/PUT /events/brokers in the OpenAPI document (see docs/events.md, "The event log
 * and GET /events" and "Streaming: SSE").
 */
import {
  BROKER_TRANSPORTS,
  ERRORS,
  EVENT_TYPES,
  brokerSettingsBodySchema,
  emptyQuerySchema,
  eventStreamQuerySchema,
  eventsQuerySchema,
} from '@mgw/contracts';
import type { OperationSpec } from '../../openapi/operation.js';
import type { Operations } from '../../http/route-table.js';
import type { ApiConfig } from '../../config.js';
import { mirrored, type AdminOperationSpec } from '../../openapi/admin-operation.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { closed, int, ref, str, timestamp } from '../../openapi/schema-helpers.js';
import { streamQuerySchema, type EventAdminName } from './admin.js';
import type { EventName } from './mount.js';
import { recentEventsQuerySchema } from './recent-events.js';

// GET and PUT /events/brokers (docs/events.md, "Brokers").
const setting = closed(
  {
    enabled: { type: 'boolean', description: "Whether the device's events are published to this broker." },
    events: {
      type: 'array',
      items: { type: 'string', enum: [...EVENT_TYPES] },
      description: 'Only these event types; every type when absent.',
    },
  },
  ['enabled'],
);

export const eventBrokerSchemas: Record<string, JsonSchema> = {
  BrokerSetting: setting,
  BrokerSettings: closed(
    {
      rabbitmq: { $ref: '#/components/schemas/BrokerSetting' },
      nats: { $ref: '#/components/schemas/BrokerSetting' },
      sqs: { $ref: '#/components/schemas/BrokerSetting' },
    },
    [...BROKER_TRANSPORTS],
  ),
  BrokerSettingsResult: closed(
    { success: { type: 'boolean', const: true }, data: { $ref: '#/components/schemas/BrokerSettings' } },
    ['success', 'data'],
  ),
};

const ABOUT =
  "The operator connects the gateway to RabbitMQ (EVENTS_RABBITMQ_URL: a durable topic exchange, routing key `<deviceId>.<type>`), NATS JetStream (EVENTS_NATS_URL: subject `<prefix>.<deviceId>.<type>`) and/or an Amazon SQS queue (EVENTS_SQS_QUEUE_URL: on a FIFO queue `MessageGroupId` = the device id, `MessageDeduplicationId` = the event id); each event is then published once the change it reports is stored, with the webhook's body and the event's id (RabbitMQ `messageId`, JetStream `Nats-Msg-Id`, SQS message attribute `mgw-event-id`), at least once, in order per device (SQS: on a FIFO queue). A device publishes every event to RabbitMQ and NATS unless it says otherwise here; SQS is opt-in: nothing goes to it until the device sets `sqs.enabled`. Where the brokers are is the operator's setting, never a device's. A transport the install does not configure publishes nothing whatever its setting.";

/** GET and PUT /events/brokers. */
function eventBrokerOperations(
  config: ApiConfig,
  operation: (spec: OperationSpec) => JsonSchema,
): Operations<'getBrokers' | 'putBrokers'> {
  return {
    getBrokers: operation({
      tag: 'Events',
      summary: "The device's broker settings (RabbitMQ, NATS, SQS)",
      description: ABOUT,
      rateLimit: config.rateLimits.webhook,
      query: emptyQuerySchema,
      success: { status: 200, schema: 'BrokerSettingsResult', description: 'Every transport’s setting.' },
      errors: [],
    }),
    putBrokers: operation({
      tag: 'Events',
      summary: 'Turn broker publishing on or off for the device, and pick event types',
      description: `${ABOUT} The body names the transports to change (at least one); the others keep their setting.`,
      rateLimit: config.rateLimits.webhook,
      query: emptyQuerySchema,
      body: brokerSettingsBodySchema,
      success: {
        status: 200,
        schema: 'BrokerSettingsResult',
        description: 'Every transport’s setting after the change.',
      },
      errors: [413],
    }),
  };
}

const cursor = (description: string): JsonSchema => ({
  type: 'string',
  pattern: '^\\d{1,15}-\\d{1,19}$',
  description,
});

/** The schemas of GET /events, GET /events/stream and GET/PUT /events/brokers. */
export const eventLogSchemas: Record<string, JsonSchema> = {
  ...eventBrokerSchemas,
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

/**
 * GET /events/stream: built like any operation, then its success answer is a `text/event-stream`
 * (no JSON schema: each event's `data` line is a LoggedEvent without its cursor, which is the
 * `id:` line) and the `Last-Event-ID` header is added to its parameters.
 */
export function eventStreamOperation(
  config: ApiConfig,
  operation: (spec: OperationSpec) => JsonSchema,
): JsonSchema {
  const { perToken, keepAliveMs } = config.eventStream;
  const op = operation({
    tag: 'Events',
    summary: "The device's events as they happen (Server-Sent Events)",
    description:
      'A `text/event-stream` of the event log: each event is `id: <cursor>`, `event: <type>` and `data: {"id","type","timestamp","data"}` (an item of GET /events without its cursor). ' +
      'A client that reconnects with `Last-Event-ID` (or `after`, when it cannot set headers) gets every event after it, once and in order, then live; without either the stream starts with what happens from now. ' +
      `A comment line comes every ${keepAliveMs / 1000} s while nothing happens. A cursor older than the log is answered with \`event: truncated\` before the oldest event kept. ` +
      'A reader that does not keep up is cut: `event: error` with `data: {"reason":"slow_reader"}`, then the end (reconnect with Last-Event-ID). ' +
      `A token may hold ${perToken} streams open per API process (EVENT_STREAMS_PER_TOKEN): one more is refused with 429 \`${ERRORS.tooManyEventStreams}\`. A pool token is refused (403).`,
    rateLimit: config.rateLimits.messages,
    query: eventStreamQuerySchema,
    success: { status: 200, schema: 'LoggedEvent', description: 'The stream.' },
    errors: [],
  }) as { responses: Record<string, Record<string, unknown>>; parameters?: JsonSchema[] };
  op.responses['200']!.content = {
    'text/event-stream': {
      schema: { type: 'string', description: 'Server-Sent Events (see the operation).' },
    },
  };
  op.parameters = [
    ...(op.parameters ?? []),
    {
      name: 'Last-Event-ID',
      in: 'header',
      required: false,
      description: 'The `id` of the last event received: the stream resumes after it (before `after`).',
      schema: { type: 'string', pattern: '^\\d{1,15}-\\d{1,19}$' },
    },
  ];
  return op as JsonSchema;
}

/**
 * GET /events/ws: a WebSocket, which OpenAPI cannot describe past its handshake. Documented as the
 * upgrade request it is: its parameters, the `101 Switching Protocols` answer (each frame is a
 * LoggedEvent, described in prose and by the schema), and the JSON refusals before the upgrade.
 */
export function eventSocketOperation(
  config: ApiConfig,
  operation: (spec: OperationSpec) => JsonSchema,
): JsonSchema {
  const { perToken, keepAliveMs } = config.eventStream;
  const op = operation({
    tag: 'Events',
    summary: "The device's events as they happen (WebSocket)",
    description:
      'The event stream of GET /events/stream over a WebSocket (docs/events.md "Streaming: WebSocket"). ' +
      'Each event is one JSON text frame, a LoggedEvent: `{"type","cursor","id","timestamp","data"}`. A cursor older than the log is answered with `{"type":"truncated","after"}` first. ' +
      'Reconnect with `after=<cursor of the last frame>` to get every event after it, once and in order, then live; without it the stream starts with what happens from now (the cursor is taken before the handshake is answered). ' +
      'Authentication: `Authorization: Bearer <token>`, or from a browser (which cannot set headers) the subprotocols `mgw.events.v1` and `mgw.bearer.<token>` (`new WebSocket(url, ["mgw.events.v1", "mgw.bearer." + token])`): the server selects `mgw.events.v1` and never echoes the token. Keep the token out of the URL. ' +
      `Every refusal (401, 403, 400, 429, 426) is the error JSON before the upgrade. After it, the server pings every ${keepAliveMs / 1000} s and drops a peer that answered none of the last ping; it closes with 1008 \`slow_reader\` (the client did not take what it was sent), 1001 \`shutdown\` (reconnect, to another process, with \`after\`) or 1011 \`error\` (the log could not be read). ` +
      `A token may hold ${perToken} streams open per API process, WebSocket and SSE together (EVENT_STREAMS_PER_TOKEN); a pool token is refused (403).`,
    rateLimit: config.rateLimits.messages,
    query: eventStreamQuerySchema,
    success: {
      status: 101,
      schema: 'LoggedEvent',
      description: 'Switching Protocols: the WebSocket is open.',
    },
    errors: [426],
  }) as { responses: Record<string, Record<string, unknown>>; parameters?: JsonSchema[] };
  op.responses['101'] = {
    description:
      'Switching Protocols: the WebSocket is open. Each text frame it carries is a LoggedEvent (the schema below).',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/LoggedEvent' } } },
  };
  op.responses['426']!.description =
    `\`${ERRORS.webSocketUpgradeRequired}\`: a plain HTTP request (no Upgrade: websocket).`;
  op.parameters = [
    ...(op.parameters ?? []),
    {
      name: 'Sec-WebSocket-Protocol',
      in: 'header',
      required: false,
      description:
        'From a browser: `mgw.events.v1, mgw.bearer.<token>` (the token where the Authorization header cannot go). The answer selects `mgw.events.v1`.',
      schema: { type: 'string' },
    },
  ];
  return op as JsonSchema;
}

/** The event log's operations, by handler (mount.ts): the pull, the two streams, and the broker settings. */
export function eventOperations(
  config: ApiConfig,
  operation: (spec: OperationSpec) => JsonSchema,
): Operations<EventName> {
  return {
    list: eventLogOperation(config, operation),
    stream: eventStreamOperation(config, operation),
    socket: eventSocketOperation(config, operation),
    ...eventBrokerOperations(config, operation),
  };
}

// --- The events' admin routes in the admin document (admin.ts): the live views and a device's Events tab.

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
