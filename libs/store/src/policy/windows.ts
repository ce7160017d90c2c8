/**
 * The policy's clock: which cap window a moment is in, whether it is in quiet hours, and the cap
 * of a window (warm-up step or daily cap, less the OTP reserve). Pure functions of the time and
 * the policy; the counters they size are in admission.ts.
 */
import { DAY_MS, type SendPolicy } from './config.js';

/**
 * One formatter per time zone: building an `Intl.DateTimeFormat` costs far more than using one,
 * and the sender asks for the cap window on every message (2 % of its CPU in the fleet bench).
 */
const clockFormats = new Map<string, Intl.DateTimeFormat>();

/**
 * Each time zone's UTC offset in the minute last asked about: an offset changes only on a minute's
 * boundary (daylight saving), and formatting a date in a time zone costs ~10 µs — every message of
 * the minute after the first one reads it here.
 */
const offsets = new Map<string, { minute: number; offsetMs: number }>();

/** Minutes since midnight and the UTC offset (ms) of `now` in `timeZone`. */
function localClock(now: number, timeZone: string): { minutes: number; offsetMs: number } {
  const minute = Math.floor(now / 60_000);
  let known = offsets.get(timeZone);
  if (known?.minute !== minute) {
    known = { minute, offsetMs: utcOffset(now, timeZone) };
    offsets.set(timeZone, known);
  }
  const { offsetMs } = known;
  return { minutes: Math.floor((now + offsetMs) / 60_000) % (24 * 60), offsetMs };
}

/** The UTC offset (ms, whole minutes) of `timeZone` at `now`, from `Intl`. */
function utcOffset(now: number, timeZone: string): number {
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
  return Math.round((localAsUtc - Math.floor(now / 1000) * 1000) / 60_000) * 60_000;
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
