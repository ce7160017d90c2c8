/**
 * The counters the caps are checked against: a usage hash per device and cap window (messages
 * sent, first contacts among them) and the set of numbers the account has a chat with (a message
 * to any other number is a first contact).
 */
import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { ADMIT } from './admission-script.js';
import { forgetLabels } from '../labels/label-store.js';

export type CapName = 'daily_cap' | 'first_contact_cap';
export type Admission = { ok: true; first: boolean } | { ok: false; cap: CapName };

const asLimit = (n: number) => (n === Infinity ? -1 : n);

/**
 * One message's take of the caps of the window `windowStart`: `cap` messages, `firstContactCap`
 * first contacts (Infinity: none). A group's message (`group`) counts as one message and never as
 * a first contact. Taken by `admitMessage`, or with the message's claim (MessageStore.claimAdmitted).
 */
export interface CapTake {
  phone: string;
  windowStart: number;
  windowMs: number;
  cap: number;
  firstContactCap: number;
  group: boolean;
}

/** The keys and arguments of `lua/includes/policy-admit.lua`'s take, as its scripts pass them. */
export function capTakeCall(deviceId: string, take: CapTake): { keys: [string, string]; args: string[] } {
  return {
    keys: [keys.deviceUsage(deviceId, take.windowStart), keys.deviceChats(deviceId)],
    args: [
      take.phone,
      String(asLimit(take.cap)),
      String(asLimit(take.firstContactCap)),
      String(2 * take.windowMs),
      take.group ? '1' : '0',
    ],
  };
}

/**
 * Takes one message of the window `windowStart` if `cap` and `firstContactCap` allow it. A group's
 * message (`group`) counts as one message and never as a first contact.
 */
export async function admitMessage(
  redis: RedisClient,
  deviceId: string,
  phone: string,
  windowStart: number,
  windowMs: number,
  cap: number,
  firstContactCap: number,
  group = false,
): Promise<Admission> {
  const call = capTakeCall(deviceId, { phone, windowStart, windowMs, cap, firstContactCap, group });
  const [ok, what] = await ADMIT.run(redis, call.keys, call.args);
  return ok === 1 ? { ok: true, first: what === 1 } : { ok: false, cap: what as CapName };
}

/** Gives back a message taken by `admitMessage` that was not sent after all. */
export async function releaseMessage(
  redis: RedisClient,
  deviceId: string,
  windowStart: number,
  first: boolean,
) {
  const tx = redis.multi().hincrby(keys.deviceUsage(deviceId, windowStart), 'sent', -1);
  if (first) tx.hincrby(keys.deviceUsage(deviceId, windowStart), 'firstContacts', -1);
  await tx.exec();
}

/** The account has a chat with these numbers now (it sent them a message, or they wrote). */
export async function rememberChats(redis: RedisClient, deviceId: string, phones: string[]): Promise<void> {
  if (phones.length) await redis.sadd(keys.deviceChats(deviceId), ...phones);
}

/**
 * The account is gone (logged out): its chats, its pause, its blocklist, its labels, its channel
 * list and its history count are not the next account's. Usage counters run out with their window; the warm-up restarts
 * with the next link.
 */
export async function forgetAccount(redis: RedisClient, deviceId: string): Promise<void> {
  await redis.del(
    keys.deviceChats(deviceId),
    keys.deviceRestriction(deviceId),
    keys.blocklist(deviceId),
    keys.deviceChannels(deviceId),
    // The next account linked here gets its own history budget.
    keys.historyCount(deviceId),
  );
  await forgetLabels(redis, deviceId);
}
