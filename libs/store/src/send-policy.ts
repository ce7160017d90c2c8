import type { RedisClient } from '@mgw/common';
import Joi from 'joi';

/** A plain connection or a Cluster client: every script here touches one device's slot. */
type Client = RedisClient;
import { keys } from '@mgw/contracts';

/**
 * A device's sending policy: how much it may send per cap window (a day from midnight in the
 * device's time zone by default), how fast that grows after the account was linked (warm-up), how
 * many of those may be first messages to numbers the account has no chat with, which share of the
 * caps is kept for OTPs, and when it must not send at all (quiet hours). Defaults come from the
 * environment (`SEND_POLICY_ENV`), each device may override any of them (`keys.deviceSettings`,
 * through the admin API). The sender enforces it (services/sender/src/send-policy.ts); the API
 * reads it for GET /status and the admin API.
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
] as const;
export type PolicyField = (typeof POLICY_FIELDS)[number];

const DAY_MS = 24 * 60 * 60 * 1000;
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

function parseCaps(raw: string): number[] {
  return raw && raw !== 'off' ? raw.split(',').map(Number) : [];
}
function parseQuiet(raw: string): SendPolicy['quietHours'] {
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
  /** Restart (true) or end (false) the warm-up now. */
  restartWarmup: Joi.boolean(),
}).min(1);

export type PolicyOverride = Partial<Record<PolicyField, unknown>> & { restartWarmup?: boolean };

/** The device's overrides as stored (strings), for the admin API. */
export async function readOverrides(redis: Client, deviceId: string): Promise<Record<string, unknown>> {
  return parseOverrides(await redis.hgetall(keys.deviceSettings(deviceId)));
}

function parseOverrides(raw: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of POLICY_FIELDS) {
    const v = raw[field];
    if (v === undefined) continue;
    if (field === 'warmupCaps') out[field] = parseCaps(v);
    else if (field === 'quietHours' || field === 'timeZone') out[field] = v;
    else out[field] = Number(v);
  }
  return out;
}

/** Stores a validated override (see `policyOverrideSchema`). */
export async function writeOverrides(redis: Client, deviceId: string, o: PolicyOverride, now = Date.now()) {
  const key = keys.deviceSettings(deviceId);
  const tx = redis.multi();
  for (const field of POLICY_FIELDS) {
    const v = o[field];
    if (v === undefined) continue;
    if (v === null) tx.hdel(key, field);
    else tx.hset(key, field, Array.isArray(v) ? (v.length ? v.join(',') : 'off') : String(v));
  }
  // Ending the warm-up moves its start far enough back; restarting it starts it now.
  if (o.restartWarmup !== undefined) tx.hset(key, 'warmupFrom', String(o.restartWarmup ? now : 0));
  await tx.exec();
}

/** The device's effective policy and when its warm-up started (ms; undefined = not yet known). */
export async function effectivePolicy(
  redis: Client,
  deviceId: string,
  config: SendPolicyConfig,
): Promise<{ policy: SendPolicy; warmupFrom?: number; sendGapMs?: number }> {
  const settings = await redis.hgetall(keys.deviceSettings(deviceId));
  const raw = parseOverrides(settings);
  const warmupFrom = settings.warmupFrom ?? null;
  const d = config.defaults;
  const policy: SendPolicy = {
    dailyCap: (raw.dailyCap as number | undefined) ?? d.dailyCap,
    warmupCaps: (raw.warmupCaps as number[] | undefined) ?? d.warmupCaps,
    firstContactCap: (raw.firstContactCap as number | undefined) ?? d.firstContactCap,
    otpReserve: (raw.otpReserve as number | undefined) ?? d.otpReserve,
    quietHours: raw.quietHours !== undefined ? parseQuiet(raw.quietHours as string) : d.quietHours,
    timeZone:
      raw.timeZone !== undefined && isTimeZone(raw.timeZone as string)
        ? (raw.timeZone as string)
        : d.timeZone,
  };
  return {
    policy,
    warmupFrom: warmupFrom === null ? undefined : Number(warmupFrom),
    sendGapMs: raw.sendGapMs as number | undefined,
  };
}

/**
 * A new link starts the device's warm-up (called when the phone confirmed the pairing). Devices
 * linked before there was a warm-up have no start and get the daily cap.
 */
export async function startWarmup(redis: Client, deviceId: string, now = Date.now()): Promise<void> {
  await redis.hset(keys.deviceSettings(deviceId), 'warmupFrom', String(now));
}

// --- the cap window --------------------------------------------------------------------------

/**
 * One formatter per time zone: building an `Intl.DateTimeFormat` costs far more than using one,
 * and the sender asks for the cap window on every message (2 % of its CPU in the fleet bench).
 */
const clockFormats = new Map<string, Intl.DateTimeFormat>();

/** Minutes since midnight and the UTC offset (ms) of `now` in `timeZone`. */
function localClock(now: number, timeZone: string): { minutes: number; offsetMs: number } {
  let format = clockFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    clockFormats.set(timeZone, format);
  }
  const parts = format.formatToParts(now);
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value ?? 0);
  const localAsUtc = Date.UTC(
    get('year'),
    get('month') - 1,
    get('day'),
    get('hour'),
    get('minute'),
    get('second'),
  );
  const offsetMs = Math.round((localAsUtc - Math.floor(now / 1000) * 1000) / 60_000) * 60_000;
  return { minutes: get('hour') * 60 + get('minute'), offsetMs };
}

/** Start and end (ms) of the cap window `now` is in. */
export function capWindow(now: number, windowMs: number, timeZone: string): { start: number; end: number } {
  if (windowMs !== DAY_MS) {
    const start = Math.floor(now / windowMs) * windowMs;
    return { start, end: start + windowMs };
  }
  const { offsetMs } = localClock(now, timeZone);
  const start = Math.floor((now + offsetMs) / DAY_MS) * DAY_MS - offsetMs;
  return { start, end: start + DAY_MS };
}

/** When the quiet hours `now` is in end (ms), or undefined when `now` is not in quiet hours. */
export function quietUntil(now: number, policy: SendPolicy): number | undefined {
  const q = policy.quietHours;
  if (!q) return undefined;
  const { minutes } = localClock(now, policy.timeZone);
  const inside =
    q.start < q.end ? minutes >= q.start && minutes < q.end : minutes >= q.start || minutes < q.end;
  if (!inside) return undefined;
  const left = (q.end - minutes + 24 * 60) % (24 * 60);
  return Math.floor(now / 60_000) * 60_000 + left * 60_000;
}

/** The cap of the window starting at `windowStart`: the warm-up ladder's step, then the daily cap. */
export function capOf(
  policy: SendPolicy,
  windowStart: number,
  windowMs: number,
  warmupFrom: number | undefined,
) {
  const uncapped = (n: number) => (n === 0 ? Infinity : n);
  const daily = uncapped(policy.dailyCap);
  if (warmupFrom === undefined || !policy.warmupCaps.length) return { cap: daily, warmupDay: undefined };
  const firstStart = capWindow(warmupFrom, windowMs, policy.timeZone).start;
  const day = Math.max(0, Math.round((windowStart - firstStart) / windowMs));
  if (day >= policy.warmupCaps.length) return { cap: daily, warmupDay: undefined };
  return { cap: Math.min(uncapped(policy.warmupCaps[day]!), daily), warmupDay: day + 1 };
}

/** A cap minus the OTP reserve (the share of it, rounded down): what other messages may use. */
export function capWithoutReserve(cap: number, reserve: number): number {
  return cap === Infinity ? cap : cap - Math.floor(cap * reserve);
}

// --- usage counters ---------------------------------------------------------------------------

/**
 * KEYS: usage (window), chats. ARGV: phone, cap, first-contact cap (-1 = none), TTL ms.
 * Takes one message of the window when the caps allow: {1, first?} or {0, 'daily_cap' |
 * 'first_contact_cap'}. One device's keys: one slot.
 */
const ADMIT_SCRIPT = `
local usage, chats = KEYS[1], KEYS[2]
local cap, fcap = tonumber(ARGV[2]), tonumber(ARGV[3])
local first = redis.call('SISMEMBER', chats, ARGV[1]) == 0
local sent = tonumber(redis.call('HGET', usage, 'sent') or '0')
if cap >= 0 and sent >= cap then return {0, 'daily_cap'} end
if first and fcap >= 0 and tonumber(redis.call('HGET', usage, 'firstContacts') or '0') >= fcap then
  return {0, 'first_contact_cap'}
end
redis.call('HINCRBY', usage, 'sent', 1)
if first then redis.call('HINCRBY', usage, 'firstContacts', 1) end
redis.call('PEXPIRE', usage, tonumber(ARGV[4]))
return {1, first and 1 or 0}
`;

export type CapName = 'daily_cap' | 'first_contact_cap';
export type Admission = { ok: true; first: boolean } | { ok: false; cap: CapName };

const asLimit = (n: number) => (n === Infinity ? -1 : n);

/** Takes one message of the window `windowStart` if `cap` and `firstContactCap` allow it. */
export async function admitMessage(
  redis: Client,
  deviceId: string,
  phone: string,
  windowStart: number,
  windowMs: number,
  cap: number,
  firstContactCap: number,
): Promise<Admission> {
  const [ok, what] = (await redis.eval(
    ADMIT_SCRIPT,
    2,
    keys.deviceUsage(deviceId, windowStart),
    keys.deviceChats(deviceId),
    phone,
    String(asLimit(cap)),
    String(asLimit(firstContactCap)),
    String(2 * windowMs),
  )) as [number, string | number];
  return ok === 1 ? { ok: true, first: what === 1 } : { ok: false, cap: what as CapName };
}

/** Gives back a message taken by `admitMessage` that was not sent after all. */
export async function releaseMessage(redis: Client, deviceId: string, windowStart: number, first: boolean) {
  const tx = redis.multi().hincrby(keys.deviceUsage(deviceId, windowStart), 'sent', -1);
  if (first) tx.hincrby(keys.deviceUsage(deviceId, windowStart), 'firstContacts', -1);
  await tx.exec();
}

/**
 * The account is gone (logged out): its chats and its pause are not the next account's. Usage
 * counters run out with their window; the warm-up restarts with the next link.
 */
export async function forgetAccount(redis: Client, deviceId: string): Promise<void> {
  await redis.del(keys.deviceChats(deviceId), keys.deviceRestriction(deviceId));
}

/** The account has a chat with these numbers now (it sent them a message, or they wrote). */
export async function rememberChats(redis: Client, deviceId: string, phones: string[]): Promise<void> {
  if (phones.length) await redis.sadd(keys.deviceChats(deviceId), ...phones);
}

// --- restriction ------------------------------------------------------------------------------

/** Why a device's sending is paused. */
export const RESTRICTION_REASONS = {
  /** WhatsApp's reach-out time lock (ack 463 with an active lock, or its notification). */
  reachoutTimelock: 'reachout_timelock',
  /** Ack 463 with no lock: the new-chat cap is reached or the account is restricted. */
  accountRestricted: 'account_restricted',
  /** Ack 429 (rate-overlimit). */
  rateLimited: 'rate_limited',
  /** Several sends in a row failed. */
  failures: 'repeated_failures',
} as const;
export type RestrictionReason = (typeof RESTRICTION_REASONS)[keyof typeof RESTRICTION_REASONS];

export interface Restriction {
  reason: RestrictionReason;
  /** Epoch ms when sending resumes. */
  until: number;
  /** Epoch ms when the pause began. */
  since: number;
}

export async function getRestriction(redis: Client, deviceId: string, now = Date.now()) {
  const h = await redis.hgetall(keys.deviceRestriction(deviceId));
  if (!h.reason || !(Number(h.until) > now)) return undefined;
  return { reason: h.reason as RestrictionReason, until: Number(h.until), since: Number(h.since) };
}

/**
 * Pauses the device's sending until `until` (a later end wins over an earlier one). Returns the
 * restriction now in force, and whether it is new (there was none before).
 * The one place a device becomes restricted: hook state-change events here.
 */
export async function markRestricted(
  redis: Client,
  deviceId: string,
  reason: RestrictionReason,
  until: number,
  now = Date.now(),
): Promise<{ restriction: Restriction; started: boolean }> {
  const before = await getRestriction(redis, deviceId, now);
  const restriction: Restriction = {
    reason: before && before.until > until ? before.reason : reason,
    until: Math.max(until, before?.until ?? 0),
    since: before?.since ?? now,
  };
  const key = keys.deviceRestriction(deviceId);
  await redis
    .multi()
    .hset(
      key,
      'reason',
      restriction.reason,
      'until',
      String(restriction.until),
      'since',
      String(restriction.since),
    )
    .pexpireat(key, restriction.until)
    .exec();
  return { restriction, started: !before };
}

/** Ends the device's pause now; true when there was one. The one place a restriction ends. */
export async function clearRestriction(redis: Client, deviceId: string): Promise<boolean> {
  return (await redis.del(keys.deviceRestriction(deviceId))) === 1;
}

// --- what GET /status and the admin API show -------------------------------------------------

export interface SendingView {
  sentToday: number;
  firstContactsToday: number;
  /** null: no cap. */
  dailyCap: number | null;
  firstContactCap: number | null;
  otpReserve: number;
  /** Day of the warm-up (1 = the day the account was linked), while it lasts. */
  warmupDay?: number;
  quietHours?: string;
  timeZone: string;
  /** When the current window ends and the counters start again (ISO). */
  windowEndsAt: string;
  restriction?: { reason: RestrictionReason; until: string; since: string };
  /** When waiting messages go again: the restriction's end, or the end of quiet hours. */
  pausedUntil?: string;
}

export async function sendingView(
  redis: Client,
  deviceId: string,
  config: SendPolicyConfig,
  now = Date.now(),
): Promise<SendingView> {
  const { policy, warmupFrom } = await effectivePolicy(redis, deviceId, config);
  const win = capWindow(now, config.windowMs, policy.timeZone);
  const [usage, restriction] = await Promise.all([
    redis.hmget(keys.deviceUsage(deviceId, win.start), 'sent', 'firstContacts'),
    getRestriction(redis, deviceId, now),
  ]);
  const { cap, warmupDay } = capOf(policy, win.start, config.windowMs, warmupFrom);
  const quiet = quietUntil(now, policy);
  const paused = Math.max(restriction?.until ?? 0, quiet ?? 0);
  const orNull = (n: number) => (n === Infinity || n === 0 ? null : n);
  return {
    sentToday: Math.max(0, Number(usage[0] ?? 0)),
    firstContactsToday: Math.max(0, Number(usage[1] ?? 0)),
    dailyCap: orNull(cap),
    firstContactCap: orNull(policy.firstContactCap),
    otpReserve: policy.otpReserve,
    ...(warmupDay !== undefined ? { warmupDay } : {}),
    ...(policy.quietHours ? { quietHours: formatQuiet(policy.quietHours) } : {}),
    timeZone: policy.timeZone,
    windowEndsAt: new Date(win.end).toISOString(),
    ...(restriction
      ? {
          restriction: {
            reason: restriction.reason,
            until: new Date(restriction.until).toISOString(),
            since: new Date(restriction.since).toISOString(),
          },
        }
      : {}),
    ...(paused > now ? { pausedUntil: new Date(paused).toISOString() } : {}),
  };
}
