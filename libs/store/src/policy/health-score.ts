/**
 * A device's health score: one figure (0–100) an operator watches and a pool balances by, added up
 * from the signals WhatsApp gives about the account's standing, with the reasons that cost it
 * points. Pure: health-signals.ts reads the signals from Redis. The formula is documented in
 * docs/architecture.md ("Health score"); its weights are here, in one table.
 */
import { RESTRICTION_REASONS, type RestrictionReason } from './restriction.js';

/** What the score is computed from: counts over the window, the pause in force, today's usage. */
export interface HealthSignals {
  /** Acks 463 (the reach-out time lock, the new-chat cap, a restricted account) in the window. */
  refused463: number;
  /** Acks 429 (rate-overlimit) in the window. */
  rateLimited: number;
  /** Other refused or unacknowledged sends in the window. */
  rejected: number;
  /** Socket reconnects in the window. */
  reconnects: number;
  /** Times the account was logged out (from the phone, or by WhatsApp) in the window. */
  logouts: number;
  /** The device's pause in force now, if any. */
  restriction?: RestrictionReason;
  /** Messages sent, and first contacts among them, in the current cap window. */
  sentToday: number;
  firstContactsToday: number;
}

/** Why a device lost points. */
export const HEALTH_REASONS = {
  reachoutTimelock: 'reachout_timelock',
  capped: 'capped',
  rateLimitedNow: 'rate_limited',
  failingNow: 'repeated_failures',
  refusals463: 'refusals_463',
  rateLimits429: 'rate_limits_429',
  sendRefusals: 'send_refusals',
  reconnects: 'reconnects',
  logouts: 'logouts',
  newContactRatio: 'new_contact_ratio',
} as const;
export type HealthReasonCode = (typeof HEALTH_REASONS)[keyof typeof HEALTH_REASONS];

export interface HealthReason {
  code: HealthReasonCode;
  /** Points it costs (the score is 100 less the sum, at least 0). */
  penalty: number;
  /** For a person: what happened, with its count. */
  message: string;
}

export interface DeviceHealth {
  score: number;
  /** The reasons that cost points, the costliest first; empty at 100. */
  reasons: HealthReason[];
}

/**
 * The weights. A pause in force costs most (the device cannot send now); what happened in the
 * window costs per occurrence up to a ceiling, so one bad hour does not sink a device for a day;
 * a few reconnects are normal (server restarts, network blips) and free.
 */
export const HEALTH_WEIGHTS = {
  /** A pause in force, by its reason. */
  pause: {
    [RESTRICTION_REASONS.reachoutTimelock]: 50,
    [RESTRICTION_REASONS.accountRestricted]: 40,
    [RESTRICTION_REASONS.rateLimited]: 15,
    [RESTRICTION_REASONS.failures]: 15,
  } satisfies Record<RestrictionReason, number>,
  refusal463: { each: 10, max: 40 },
  rateLimit429: { each: 5, max: 20 },
  sendRefusal: { each: 2, max: 20 },
  reconnect: { free: 2, each: 3, max: 15 },
  logout: { each: 30, max: 60 },
  /** First contacts over sends above `from` cost up to `max`, once `minSent` were sent today. */
  newContacts: { minSent: 10, from: 0.5, max: 20 },
} as const;

/** Below this a device is unhealthy: the alert fires, a pool stops giving it recipients. */
export const HEALTH_LOW_SCORE = 50;

const PAUSE: Record<RestrictionReason, [HealthReasonCode, string]> = {
  [RESTRICTION_REASONS.reachoutTimelock]: [HEALTH_REASONS.reachoutTimelock, 'reach-out time lock in force'],
  [RESTRICTION_REASONS.accountRestricted]: [
    HEALTH_REASONS.capped,
    'capped: WhatsApp refuses new chats (new-chat cap or restricted account)',
  ],
  [RESTRICTION_REASONS.rateLimited]: [HEALTH_REASONS.rateLimitedNow, 'paused: WhatsApp rate-limits sends'],
  [RESTRICTION_REASONS.failures]: [HEALTH_REASONS.failingNow, 'paused: several sends in a row failed'],
};

const counted = (n: number, w: { each: number; max: number }) => Math.min(w.max, n * w.each);
const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** The score and its reasons, from the signals; `windowHours` only words the messages. */
export function scoreHealth(s: HealthSignals, windowHours: number): DeviceHealth {
  const w = HEALTH_WEIGHTS;
  const inWindow = `in the last ${windowHours} h`;
  const reasons: HealthReason[] = [];
  const add = (code: HealthReasonCode, penalty: number, message: string) => {
    const points = Math.round(penalty);
    if (points > 0) reasons.push({ code, penalty: points, message });
  };
  if (s.restriction) add(PAUSE[s.restriction][0], w.pause[s.restriction], PAUSE[s.restriction][1]);
  add(
    HEALTH_REASONS.refusals463,
    counted(s.refused463, w.refusal463),
    `${plural(s.refused463, 'refusal')} (ack 463) ${inWindow}`,
  );
  add(
    HEALTH_REASONS.rateLimits429,
    counted(s.rateLimited, w.rateLimit429),
    `${plural(s.rateLimited, 'rate limit')} (ack 429) ${inWindow}`,
  );
  add(
    HEALTH_REASONS.sendRefusals,
    counted(s.rejected, w.sendRefusal),
    `${plural(s.rejected, 'send')} refused or unacknowledged ${inWindow}`,
  );
  add(
    HEALTH_REASONS.reconnects,
    counted(Math.max(0, s.reconnects - w.reconnect.free), w.reconnect),
    `${plural(s.reconnects, 'reconnect')} ${inWindow}`,
  );
  add(HEALTH_REASONS.logouts, counted(s.logouts, w.logout), `${plural(s.logouts, 'logout')} ${inWindow}`);
  if (s.sentToday >= w.newContacts.minSent) {
    const ratio = Math.min(1, s.firstContactsToday / s.sentToday);
    const over = Math.max(0, ratio - w.newContacts.from) / (1 - w.newContacts.from);
    add(
      HEALTH_REASONS.newContactRatio,
      over * w.newContacts.max,
      `${Math.round(ratio * 100)}% of today's ${s.sentToday} messages went to new contacts`,
    );
  }
  reasons.sort((a, b) => b.penalty - a.penalty);
  const score = Math.max(0, 100 - reasons.reduce((sum, r) => sum + r.penalty, 0));
  return { score, reasons };
}
