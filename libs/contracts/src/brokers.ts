import { Joi } from './text.js';
import { EVENT_TYPES, type EventType } from './events.js';

/**
 * The message brokers the notifier can publish a device's events to (docs/events.md, "Brokers").
 * The broker's address is the operator's (EVENTS_RABBITMQ_URL, EVENTS_NATS_URL,
 * EVENTS_SQS_QUEUE_URL): a device only turns a configured transport on or off for itself and
 * picks the event types.
 */
export const BROKER_TRANSPORTS = ['rabbitmq', 'nats', 'sqs'] as const;
export type BrokerTransportName = (typeof BROKER_TRANSPORTS)[number];

/** One device's setting for one transport. `events` absent: every event type. */
export interface BrokerDeviceSetting {
  enabled: boolean;
  events?: EventType[];
}

/** What a device without a setting gets on RabbitMQ and NATS: every event of a configured transport. */
export const DEFAULT_BROKER_SETTING: BrokerDeviceSetting = Object.freeze({ enabled: true });

/**
 * Transports a device must turn on for itself (PUT /events/brokers): nothing goes out on them
 * for a device that never said so. SQS is opt-in because every message sent to it is billed to
 * the operator's AWS account and kept in one queue for every device (docs/events.md, "SQS").
 */
export const OPT_IN_BROKER_TRANSPORTS: readonly BrokerTransportName[] = Object.freeze(['sqs']);

/** What a device without a setting for `transport` gets. */
export function defaultBrokerSetting(transport: string): BrokerDeviceSetting {
  return (OPT_IN_BROKER_TRANSPORTS as readonly string[]).includes(transport)
    ? { enabled: false }
    : { ...DEFAULT_BROKER_SETTING };
}

export type BrokerSettings = Record<BrokerTransportName, BrokerDeviceSetting>;

const setting = Joi.object<BrokerDeviceSetting>({
  enabled: Joi.boolean().required(),
  events: Joi.array()
    .items(Joi.string().valid(...EVENT_TYPES))
    .min(1)
    .unique(),
});

/** PUT /events/brokers body: the transports to change (at least one); the others keep their setting. */
export const brokerSettingsBodySchema = Joi.object<Partial<BrokerSettings>>({
  rabbitmq: setting,
  nats: setting,
  sqs: setting,
}).or(...BROKER_TRANSPORTS);

/** True when `s` lets an event of `type` out to its transport. */
export function brokerWants(s: BrokerDeviceSetting, type: string): boolean {
  return s.enabled && (!s.events || (s.events as readonly string[]).includes(type));
}
