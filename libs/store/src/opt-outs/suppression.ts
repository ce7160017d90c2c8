/**
 * A device's suppression list (`keys.optOuts`): numbers that opted out, by a keyword they wrote
 * (services/sender/src/opt-outs.ts) or through the admin API. The sender fails a message to one
 * of them `opted_out` before asking WhatsApp anything (OTPs excepted: the person asked for them).
 */
import { randomUUID } from 'node:crypto';
import { RedisScript, type RedisClient } from '@mgw/common';
import { keys, type ContactOptEventData } from '@mgw/contracts';
import { EMIT_LUA } from '../events.js';

/** Who put a number on the list or took it off. */
export type OptOutSource = ContactOptEventData['source'];

/**
 * KEYS: suppression list, webhook, outbox. ARGV: direction (`out` | `in`), phone, now (ms),
 * events channel, deviceId, event id, time (ISO), event data JSON.
 * Adds (`out`) or removes (`in`) the number and, when that changed the list, emits
 * `contact.opted_out` / `contact.opted_in` in the same script (a change and its event are written
 * together). Returns 1 when the list changed, 0 when the number was already on (off) it.
 */
const CHANGE = new RedisScript<number>(
  'mgwOptOutChange',
  `${EMIT_LUA}
local changed
if ARGV[1] == 'out' then
  changed = redis.call('ZADD', KEYS[1], 'NX', ARGV[3], ARGV[2])
else
  changed = redis.call('ZREM', KEYS[1], ARGV[2])
end
if changed == 0 then return 0 end
mgw_emit(KEYS[2], KEYS[3], ARGV[4], ARGV[5], ARGV[6], 'contact.opted_' .. ARGV[1], ARGV[7], ARGV[8])
return 1`,
);

async function change(
  redis: RedisClient,
  deviceId: string,
  direction: 'out' | 'in',
  phone: string,
  source: OptOutSource,
  now: Date,
): Promise<boolean> {
  const at = now.toISOString();
  const data: ContactOptEventData = { deviceId, phone, source, at };
  const changed = await CHANGE.run(
    redis,
    [keys.optOuts(deviceId), keys.webhook(deviceId), keys.eventOutbox(deviceId)],
    [direction, phone, now.getTime(), keys.eventsChannel(), deviceId, randomUUID(), at, JSON.stringify(data)],
  );
  return changed === 1;
}

/** Puts the number on the device's suppression list; true when it was not on it before. */
export function optOut(
  redis: RedisClient,
  deviceId: string,
  phone: string,
  source: OptOutSource,
  now = new Date(),
): Promise<boolean> {
  return change(redis, deviceId, 'out', phone, source, now);
}

/** Takes the number off the device's suppression list; true when it was on it. */
export function optIn(
  redis: RedisClient,
  deviceId: string,
  phone: string,
  source: OptOutSource,
  now = new Date(),
): Promise<boolean> {
  return change(redis, deviceId, 'in', phone, source, now);
}

/** True when the number is on the device's suppression list. */
export async function isOptedOut(redis: RedisClient, deviceId: string, phone: string): Promise<boolean> {
  return (await redis.zscore(keys.optOuts(deviceId), phone)) !== null;
}

/** One suppressed number as the admin API lists it. */
export interface OptOutEntry {
  phone: string;
  optedOutAt: string;
}

export interface OptOutPage {
  total: number;
  numbers: OptOutEntry[];
  /** Give it back as `cursor` for the next page; absent on the last page. */
  nextCursor?: string;
}

/** A cursor: the last entry of the previous page, `<ms>-<phone>` (newest first, then by number). */
const CURSOR_PATTERN = /^(\d{1,15})-(\d{7,15})$/;
export function isOptOutCursor(cursor: string): boolean {
  return CURSOR_PATTERN.test(cursor);
}

/**
 * A page of the device's suppression list, newest first. The list is ordered by (time desc,
 * number desc) — Redis's reverse order — so a cursor is the last entry's pair; numbers added
 * meanwhile (newer) never shift a page, numbers removed meanwhile are just missing.
 */
export async function listOptOuts(
  redis: RedisClient,
  deviceId: string,
  opts: { cursor?: string; limit: number },
): Promise<OptOutPage> {
  const key = keys.optOuts(deviceId);
  const m = opts.cursor ? CURSOR_PATTERN.exec(opts.cursor) : null;
  let rows: string[];
  if (!m) {
    rows = await redis.zrevrangebyscore(key, '+inf', '-inf', 'WITHSCORES', 'LIMIT', 0, opts.limit + 1);
  } else {
    // Entries of the cursor's own millisecond that come after it, then older ones.
    const [, score, phone] = m;
    const tied = await redis.zcount(key, score!, score!);
    rows = await redis.zrevrangebyscore(key, score!, '-inf', 'WITHSCORES', 'LIMIT', 0, tied + opts.limit + 1);
    const kept: string[] = [];
    for (let i = 0; i < rows.length; i += 2) {
      if (rows[i + 1] === score && rows[i]! >= phone!) continue;
      kept.push(rows[i]!, rows[i + 1]!);
    }
    rows = kept;
  }
  const numbers: OptOutEntry[] = [];
  for (let i = 0; i < rows.length && numbers.length < opts.limit; i += 2)
    numbers.push({ phone: rows[i]!, optedOutAt: new Date(Number(rows[i + 1])).toISOString() });
  const more = rows.length / 2 > numbers.length;
  const last = numbers[numbers.length - 1];
  return {
    total: await redis.zcard(key),
    numbers,
    ...(more && last ? { nextCursor: `${Date.parse(last.optedOutAt)}-${last.phone}` } : {}),
  };
}
