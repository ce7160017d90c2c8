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

/**
 * How many earlier settings a device's broker setting keeps (each with the log id it took effect
 * after): the relay judges an event waiting in the log by the setting in force when it was logged,
 * and an event older than the oldest kept is not published (docs/events.md, "Per device").
 */
export const BROKER_SETTING_HISTORY = 16;

/**
 * A device's setting for one transport over its event log: `current` governs the events logged
 * after `after` (every event when `after` is absent: never changed since the log began, or stored
 * by a release without boundaries), each of `past` (newest first) the events logged after its own
 * `after` up to the next newer one's. Kept with the setting (`BrokerSettingsStore`); `after` is
 * the log's last id when the change was made (in the same Redis step), so no event is on the
 * wrong side of it.
 */
export interface BrokerSettingHistory {
  current: BrokerDeviceSetting;
  after?: string;
  past: { setting: BrokerDeviceSetting; after?: string }[];
}

/**
 * The setting in force when the event at log id `logId` was logged; undefined when it is older
 * than every setting kept (the history's bound: not known, so not published).
 */
export function brokerSettingAt(h: BrokerSettingHistory, logId: string): BrokerDeviceSetting | undefined {
  if (h.after === undefined || compareLogIds(logId, h.after) > 0) return h.current;
  for (const p of h.past) if (p.after === undefined || compareLogIds(logId, p.after) > 0) return p.setting;
  return undefined;
}

/** True when the setting in force when the event at `logId` was logged let an event of `type` out. */
export function brokerWantsAt(h: BrokerSettingHistory, logId: string, type: string): boolean {
  const s = brokerSettingAt(h, logId);
  return s !== undefined && brokerWants(s, type);
}

/**
 * Orders two stream entry ids (`<ms>-<seq>`, as Redis writes them: decimal, no leading zero):
 * by the time, then the sequence, exactly (as numbers of any size, without parsing them: the
 * relay compares every event it reads).
 */
export function compareLogIds(a: string, b: string): number {
  const ai = a.indexOf('-');
  const bi = b.indexOf('-');
  return compareDigits(a, 0, ai, b, 0, bi) || compareDigits(a, ai + 1, a.length, b, bi + 1, b.length);
}

/** Compares the decimal numbers a[as, ae) and b[bs, be). */
function compareDigits(a: string, as: number, ae: number, b: string, bs: number, be: number): number {
  if (ae - as !== be - bs) return ae - as < be - bs ? -1 : 1;
  for (let i = 0; i < ae - as; i++) {
    const x = a.charCodeAt(as + i);
    const y = b.charCodeAt(bs + i);
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/**
 * The settings that may govern the events logged after `afterId` (every event without it), newest
 * first; `undefined` stands for events older than every setting kept (not published).
 */
export function brokerSettingsAfter(
  h: BrokerSettingHistory,
  afterId: string | undefined,
): (BrokerDeviceSetting | undefined)[] {
  const out: (BrokerDeviceSetting | undefined)[] = [h.current];
  // Events after `afterId` are all past `bound`: the settings found so far govern them all.
  const covered = (bound: string | undefined) =>
    bound === undefined || (afterId !== undefined && compareLogIds(afterId, bound) >= 0);
  let bound = h.after;
  for (const p of h.past) {
    if (covered(bound)) return out;
    out.push(p.setting);
    bound = p.after;
  }
  if (!covered(bound)) out.push(undefined);
  return out;
}
