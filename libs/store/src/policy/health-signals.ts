/**
 * The signals of a device's health score that nothing else keeps (refusals, rate limits,
 * reconnects, logouts), counted per UTC hour in the device's slot (`keys.deviceHealth`), and the
 * score itself: those counts over the window plus the pause and today's usage of status-view.ts.
 * The sender records; GET /status, the admin API, the sender's gauge and pools read
 * `deviceHealth` (a few reads, one pipeline for the window).
 */
import { pipelineReplies, type RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import type { SendPolicyConfig } from './config.js';
import { scoreHealth, type DeviceHealth, type HealthSignals } from './health-score.js';
import { sendingView, type SendingView } from './status-view.js';

/** How far back the counted signals reach. */
export const HEALTH_WINDOW_HOURS = 24;

/** The signals counted per hour. */
export const HEALTH_SIGNALS = ['refused463', 'rateLimited', 'rejected', 'reconnects', 'logouts'] as const;
export type HealthSignal = (typeof HEALTH_SIGNALS)[number];

const HOUR_MS = 3_600_000;

/** Counts one signal in the current hour; its hour lives the window and one hour more. */
export async function recordHealthSignal(
  redis: RedisClient,
  deviceId: string,
  signal: HealthSignal,
  now = Date.now(),
): Promise<void> {
  const key = keys.deviceHealth(deviceId, new Date(now).toISOString());
  await redis
    .multi()
    .hincrby(key, signal, 1)
    .expire(key, (HEALTH_WINDOW_HOURS + 1) * 3600)
    .exec();
}

/** Each signal summed over the window (the current hour and the ones before it). One round trip. */
export function healthCounts(
  redis: RedisClient,
  deviceId: string,
  now = Date.now(),
): Promise<Record<HealthSignal, number>> {
  return sumHours(redis, deviceId, now, 0, HEALTH_WINDOW_HOURS);
}

/** Each signal summed over the hours `from` to `to` − 1 back from the current one (0: the current). */
async function sumHours(
  redis: RedisClient,
  deviceId: string,
  now: number,
  from: number,
  to: number,
): Promise<Record<HealthSignal, number>> {
  const current = Math.floor(now / HOUR_MS) * HOUR_MS;
  const read = redis.pipeline();
  for (let i = from; i < to; i++)
    read.hmget(keys.deviceHealth(deviceId, new Date(current - i * HOUR_MS).toISOString()), ...HEALTH_SIGNALS);
  const replies = pipelineReplies(await read.exec()) as (string | null)[][];
  const sums = Object.fromEntries(HEALTH_SIGNALS.map((s) => [s, 0])) as Record<HealthSignal, number>;
  for (const hour of replies)
    HEALTH_SIGNALS.forEach((s, j) => (sums[s] += Math.max(0, Number(hour?.[j] ?? 0))));
  return sums;
}

/**
 * One device's window for a caller that reads its counts often (the sender's gauges, every few
 * seconds for every device it holds): `recordHealthSignal` only ever counts into the current hour,
 * so the window's closed hours are summed once per hour and kept, and each read in between is
 * one HMGET of the current hour instead of 24. A signal another process counted into an hour
 * just closed, its clock a little behind, is missed by this window until the hour turns again.
 */
export class HealthWindow {
  private hour = -1;
  private closed: Record<HealthSignal, number> | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly deviceId: string,
  ) {}

  async counts(now = Date.now()): Promise<Record<HealthSignal, number>> {
    const hour = Math.floor(now / HOUR_MS);
    if (hour !== this.hour || !this.closed) {
      const closed = await sumHours(this.redis, this.deviceId, now, 1, HEALTH_WINDOW_HOURS);
      this.closed = closed;
      this.hour = hour;
    }
    const current = await sumHours(this.redis, this.deviceId, now, 0, 1);
    const closed = this.closed;
    return Object.fromEntries(HEALTH_SIGNALS.map((s) => [s, current[s] + closed[s]])) as Record<
      HealthSignal,
      number
    >;
  }
}

/**
 * The device's health score with its reasons. `view` saves its reads when the caller has the
 * device's sending view already (GET /status, the admin API, the sender's gauges).
 */
export async function deviceHealth(
  redis: RedisClient,
  deviceId: string,
  config: SendPolicyConfig,
  now = Date.now(),
  view?: SendingView,
  /** The device's window kept by a caller that reads it often (the sender's gauges). */
  window?: HealthWindow,
): Promise<DeviceHealth> {
  const [counts, sending] = await Promise.all([
    window ? window.counts(now) : healthCounts(redis, deviceId, now),
    view ?? sendingView(redis, deviceId, config, now),
  ]);
  const signals: HealthSignals = {
    ...counts,
    ...(sending.restriction ? { restriction: sending.restriction.reason } : {}),
    sentToday: sending.sentToday,
    firstContactsToday: sending.firstContactsToday,
  };
  return scoreHealth(signals, HEALTH_WINDOW_HOURS);
}
