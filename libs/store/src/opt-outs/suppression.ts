/**
 * A device's suppression list (`keys.optOuts`): numbers that opted out, by a keyword they wrote
 * (services/sender/src/inbound/opt-outs.ts) or through the admin API. The sender fails a message to one
 * of them `opted_out` before asking WhatsApp anything (OTPs excepted: the person asked for them).
 */
import { randomUUID } from 'node:crypto';
import type { RedisClient } from '@mgw/common';
import { keys, type ContactIdentity, type ContactOptEventData } from '@mgw/contracts';
import { ContactIdentities } from '../contacts/contact-identities.js';
import { storeScript } from '../lua.js';

/** Who put a number on the list or took it off. */
export type OptOutSource = ContactOptEventData['source'];

/**
 * One contact, one entry: `out` adds the address unless the contact is on the list already by
 * either identity; `in` removes every identity of the contact. When that changed the list, emits
 * `contact.opted_out` / `contact.opted_in` in the same script (see `lua/opt-out-change-5.lua`). Returns 1 when the list changed, 0 when the
 * contact was already on (off) it.
 */
const CHANGE = storeScript<number>('opt-out-change-5');

async function change(
  redis: RedisClient,
  deviceId: string,
  direction: 'out' | 'in',
  phone: string,
  source: OptOutSource,
  now: Date,
): Promise<boolean> {
  const at = now.toISOString();
  // Who it is, as the device's phone <-> LID map knows it now (both identities when it has the pair).
  const contact = await new ContactIdentities(redis).resolve(deviceId, phone);
  const data: ContactOptEventData = { deviceId, phone, contact, source, at };
  const changed = await CHANGE.run(
    redis,
    [
      keys.optOuts(deviceId),
      keys.webhook(deviceId),
      keys.eventOutbox(deviceId),
      keys.contactIdentities(deviceId),
      keys.eventLog(deviceId),
    ],
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

/** 1 when either identity of the address is on the list (see `lua/opt-out-check-2.lua`). */
const IS_OPTED_OUT = storeScript<number>('opt-out-check-2');

/**
 * True when the contact of `address` (a phone or `<digits>@lid`) is on the device's suppression
 * list by either identity the device's phone <-> LID map knows for it (one round trip).
 */
export async function isOptedOut(redis: RedisClient, deviceId: string, address: string): Promise<boolean> {
  return (
    (await IS_OPTED_OUT.run(redis, [keys.optOuts(deviceId), keys.contactIdentities(deviceId)], [address])) ===
    1
  );
}

/**
 * A pooled message's check: a number that opted out of any device of the pool (or of this one)
 * gets nothing from any of them.
 */
export async function isOptedOutInPool(
  redis: RedisClient,
  deviceId: string,
  poolId: string,
  address: string,
): Promise<boolean> {
  const members = await redis.hget(keys.pool(poolId), 'devices');
  const devices = new Set([deviceId, ...(members ? (JSON.parse(members) as string[]) : [])]);
  const answers = await Promise.all([...devices].map((d) => isOptedOut(redis, d, address)));
  return answers.some(Boolean);
}

/** One suppressed contact as the admin API lists it. */
export interface OptOutEntry {
  /** The entry: the phone number, or the `<digits>@lid` it opted out by. */
  phone: string;
  /** Who it is, as the device's phone <-> LID map knows it now (both identities when it has the pair). */
  contact: ContactIdentity;
  optedOutAt: string;
}

export interface OptOutPage {
  total: number;
  numbers: OptOutEntry[];
  /** Give it back as `cursor` for the next page; absent on the last page. */
  nextCursor?: string;
}

/**
 * A cursor: the last entry of the previous page, `<ms>-<phone>` or `<ms>-<digits>@lid` (newest
 * first, then by entry).
 */
const CURSOR_PATTERN = /^(\d{1,15})-(\d{7,15}|[1-9]\d{0,19}@lid)$/;
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
  const page: string[] = [];
  for (let i = 0; i < rows.length && page.length < opts.limit * 2; i += 2) page.push(rows[i]!, rows[i + 1]!);
  const entries = page.filter((_, i) => i % 2 === 0);
  const contacts = await new ContactIdentities(redis).resolveMany(deviceId, entries);
  const numbers: OptOutEntry[] = entries.map((phone, i) => ({
    phone,
    contact: contacts[i]!,
    optedOutAt: new Date(Number(page[i * 2 + 1])).toISOString(),
  }));
  const more = rows.length / 2 > numbers.length;
  const last = numbers[numbers.length - 1];
  return {
    total: await redis.zcard(key),
    numbers,
    ...(more && last ? { nextCursor: `${Date.parse(last.optedOutAt)}-${last.phone}` } : {}),
  };
}
