import Joi from 'joi';

/**
 * A device's sending policy: how much it may send per cap window (a day from midnight in the
 * device's time zone by default), how fast that grows after the account was linked (warm-up), how
 * many of those may be first messages to numbers the account has no chat with, which share of the
 * caps is kept for OTPs, and when it must not send at all (quiet hours). Defaults come from the
 * environment (`SEND_POLICY_ENV`), each device may override any of them (`keys.deviceSettings`,
 * through the admin API; see device-settings.ts). The sender enforces it
 * (services/sender/src/send/send-gate.ts); the API reads it for GET /status and the admin API.
 */
export interface SendPolicy {
  /** Messages per cap window once warmed up; 0 = no cap. */
  dailyCap: number;
  /** The caps of the first windows after the account was linked (day 1, day 2, ...); empty = none. */
  warmupCaps: number[];
  /** First messages to numbers the account has no chat with, per window; 0 = no cap. */
  firstContactCap: number;
  /** Share (0..0.5) of each cap that only OTPs may use. */
  otpReserve: number;
  /** No message but OTPs goes between these minutes of the day (device time zone); absent = none. */
  quietHours?: { start: number; end: number };
  /** IANA time zone of the device: its day and quiet hours. */
  timeZone: string;
}

/** The policy fields a device may override, with their stored (string) spelling. */
export const POLICY_FIELDS = [
  'dailyCap',
  'warmupCaps',
  'firstContactCap',
  'otpReserve',
  'quietHours',
  'timeZone',
  'sendGapMs',
  'typing',
] as const;
export type PolicyField = (typeof POLICY_FIELDS)[number];

/** The default cap window: one day, which starts at midnight in the device's time zone. */
export const DAY_MS = 24 * 60 * 60 * 1000;
const QUIET_PATTERN = /^([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-3]):([0-5]\d)$/;

export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const timeZoneSchema = Joi.string()
  .max(64)
  .custom((v: string, h) => (isTimeZone(v) ? v : h.error('any.invalid')))
  .messages({ 'any.invalid': '{{#label}} must be an IANA time zone such as Europe/Berlin' });
const quietSchema = Joi.string()
  .pattern(QUIET_PATTERN)
  .messages({ 'string.pattern.base': '{{#label}} must look like 22:00-07:00 (start-end, 24 h)' });
const capListSchema = Joi.string()
  .pattern(/^\d+(,\d+)*$/)
  .messages({ 'string.pattern.base': '{{#label}} must be caps separated by commas, such as 50,100,200' });

/** The environment variables of the policy defaults (read by the sender and the API). */
export const SEND_POLICY_ENV: Joi.PartialSchemaMap = {
  SEND_DAILY_CAP: Joi.number().integer().min(0).default(1000),
  SEND_WARMUP_CAPS: Joi.alternatives()
    .try(capListSchema, Joi.string().valid('off', ''))
    .default('50,100,200,400,700'),
  SEND_FIRST_CONTACT_CAP: Joi.number().integer().min(0).default(10),
  SEND_OTP_RESERVE: Joi.number().min(0).max(0.5).default(0.1),
  SEND_QUIET_HOURS: Joi.alternatives().try(quietSchema, Joi.string().valid('off', '')).default('off'),
  SEND_TIME_ZONE: timeZoneSchema.default('UTC'),
  SEND_CAP_WINDOW_MS: Joi.number().integer().min(1000).default(DAY_MS),
};

export interface SendPolicyConfig {
  defaults: SendPolicy;
  /**
   * Length of a cap window. One day (the default) starts at midnight in the device's time zone;
   * any other length counts fixed windows from the Unix epoch (an hourly cap; fast tests).
   */
  windowMs: number;
}

export function sendPolicyConfig(e: Record<string, unknown>): SendPolicyConfig {
  return {
    defaults: {
      dailyCap: Number(e.SEND_DAILY_CAP),
      warmupCaps: parseCaps(String(e.SEND_WARMUP_CAPS ?? '')),
      firstContactCap: Number(e.SEND_FIRST_CONTACT_CAP),
      otpReserve: Number(e.SEND_OTP_RESERVE),
      quietHours: parseQuiet(String(e.SEND_QUIET_HOURS ?? '')),
      timeZone: String(e.SEND_TIME_ZONE),
    },
    windowMs: Number(e.SEND_CAP_WINDOW_MS),
  };
}

/** A stored or configured cap list (`50,100,200`; `off` or empty = none). */
export function parseCaps(raw: string): number[] {
  return raw && raw !== 'off' ? raw.split(',').map(Number) : [];
}
/** Stored or configured quiet hours (`22:00-07:00`) as minutes of the day; anything else = none. */
export function parseQuiet(raw: string): SendPolicy['quietHours'] {
  const m = QUIET_PATTERN.exec(raw);
  if (!m) return undefined;
  const start = Number(m[1]) * 60 + Number(m[2]);
  const end = Number(m[3]) * 60 + Number(m[4]);
  return start === end ? undefined : { start, end };
}
export function formatQuiet(q: SendPolicy['quietHours']): string | undefined {
  if (!q) return undefined;
  const hm = (m: number) =>
    `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
  return `${hm(q.start)}-${hm(q.end)}`;
}

/**
 * A per-device override as the admin API takes it: a field set to null removes its override
 * (the default applies again).
 */
export const policyOverrideSchema = Joi.object({
  dailyCap: Joi.number().integer().min(0).max(1_000_000).allow(null),
  warmupCaps: Joi.array().items(Joi.number().integer().min(0).max(1_000_000)).max(60).allow(null),
  firstContactCap: Joi.number().integer().min(0).max(1_000_000).allow(null),
  otpReserve: Joi.number().min(0).max(0.5).allow(null),
  quietHours: Joi.alternatives().try(quietSchema, Joi.string().valid('off')).allow(null),
  timeZone: timeZoneSchema.allow(null),
  sendGapMs: Joi.number().integer().min(0).max(600_000).allow(null),
  /** "typing…" at the contact before a paced text (services/sender/src/send/typing.ts); on by default. */
  typing: Joi.boolean().allow(null),
  /** Restart (true) or end (false) the warm-up now. */
  restartWarmup: Joi.boolean(),
}).min(1);

export type PolicyOverride = Partial<Record<PolicyField, unknown>> & { restartWarmup?: boolean };
