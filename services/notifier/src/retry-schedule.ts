/** When a failed delivery is tried again. */
export interface RetrySchedule {
  /** Attempts in all, the first included. */
  attempts: number;
  /** Delay before the second attempt; each later one doubles it. */
  baseMs: number;
  /** No delay grows past this. */
  maxMs: number;
}

/**
 * Delay after failed attempt number `attempt` (1 = the first): exponential (base · 2^(n-1), at
 * most `maxMs`) with ±20 % jitter, so endpoints that failed together are not retried together.
 * With the defaults (10 s, 3 h, 18 attempts) the last attempt comes ~24 h after the first.
 */
export function retryDelayMs(schedule: RetrySchedule, attempt: number, random = Math.random): number {
  const exact = Math.min(schedule.maxMs, schedule.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exact * (0.8 + 0.4 * random()));
}

/** The whole schedule without jitter: when each retry comes, from the first attempt (ms). */
export function scheduleOffsets(schedule: RetrySchedule): number[] {
  const out: number[] = [];
  let at = 0;
  for (let attempt = 1; attempt < schedule.attempts; attempt++) {
    at += retryDelayMs(schedule, attempt, () => 0.5);
    out.push(at);
  }
  return out;
}
