import { Joi } from './text.js';
import { EVENT_TYPES, type EventType } from './events.js';

/**
 * The message brokers the notifier can publish a device's events to (docs/events.md, "Brokers").
 * The broker's address is the operator's (EVENTS_RABBITMQ_URL, EVENTS_NATS_URL): a device only
 * turns a configured transport on or off for itself and picks the event types.
 */
export const BROKER_TRANSPORTS = ['rabbitmq', 'nats'] as const;
export type BrokerTransportName = (typeof BROKER_TRANSPORTS)[number];

/** One device's setting for one transport. `events` absent: every event type. */
export interface BrokerDeviceSetting {
  enabled: boolean;
  events?: EventType[];
}

/** What a device without a setting gets: every event of a configured transport. */
export const DEFAULT_BROKER_SETTING: BrokerDeviceSetting = Object.freeze({ enabled: true });

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
}).or(...BROKER_TRANSPORTS);

/** True when `s` lets an event of `type` out to its transport. */
export function brokerWants(s: BrokerDeviceSetting, type: string): boolean {
  return s.enabled && (!s.events || (s.events as readonly string[]).includes(type));
}
