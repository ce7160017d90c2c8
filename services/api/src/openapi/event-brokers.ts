/**
 * GET and PUT /events/brokers in the OpenAPI document (see docs/events.md, "Brokers").
 */
import { EVENT_TYPES, brokerSettingsBodySchema, emptyQuerySchema } from '@mgw/contracts';
import type { ApiConfig } from '../config.js';
import type { JsonSchema } from './joi-schema.js';
import type { OperationSpec } from './document.js';
import { closed } from './schema-helpers.js';

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
    },
    ['rabbitmq', 'nats'],
  ),
  BrokerSettingsResult: closed(
    { success: { type: 'boolean', const: true }, data: { $ref: '#/components/schemas/BrokerSettings' } },
    ['success', 'data'],
  ),
};

const ABOUT =
  "The operator connects the gateway to RabbitMQ (EVENTS_RABBITMQ_URL: a durable topic exchange, routing key `<deviceId>.<type>`) and/or NATS JetStream (EVENTS_NATS_URL: subject `<prefix>.<deviceId>.<type>`); each event is then published once the change it reports is stored, with the webhook's body and the event's id (RabbitMQ `messageId`, JetStream `Nats-Msg-Id`), at least once, in order per device. A device publishes every event to every configured broker unless it says otherwise here. Where the brokers are is the operator's setting, never a device's. A transport the install does not configure publishes nothing whatever its setting.";

export function eventBrokerPaths(
  config: ApiConfig,
  operation: (spec: OperationSpec) => JsonSchema,
): Record<string, JsonSchema> {
  return {
    get: operation({
      tag: 'Events',
      summary: "The device's broker settings (RabbitMQ, NATS)",
      description: ABOUT,
      rateLimit: config.rateLimits.webhook,
      query: emptyQuerySchema,
      success: { status: 200, schema: 'BrokerSettingsResult', description: 'Both transports’ settings.' },
      errors: [],
    }),
    put: operation({
      tag: 'Events',
      summary: 'Turn broker publishing on or off for the device, and pick event types',
      description: `${ABOUT} The body names the transports to change (at least one); the others keep their setting.`,
      rateLimit: config.rateLimits.webhook,
      query: emptyQuerySchema,
      body: brokerSettingsBodySchema,
      success: {
        status: 200,
        schema: 'BrokerSettingsResult',
        description: 'Both transports’ settings after the change.',
      },
      errors: [413],
    }),
  };
}
