import type { Metrics } from '@mgw/contracts';
import type { ContactAnswer, ContactCache, ContactLookupCap, SessionStore } from '@mgw/store';
import { askHolder, type DeviceHolder, type HolderFailure } from '../holder/index.js';

/** The longest one WhatsApp query may take before the API stops waiting for the whole check. */
const QUERY_BUDGET_SECONDS = 20;
/** Room for the command's way there and back, and for a check of the device queued before this one. */
const EXTRA_WAIT_SECONDS = 15;

/** One number's answer, as POST /contacts/check gives it. */
export interface ContactCheckResult {
  phone: string;
  onWhatsApp: boolean;
  lid?: string;
  /** The phone JID WhatsApp knows the number by (`pn_jid`), when it is on WhatsApp. */
  phoneJid?: string;
}

export interface NumberCheckDeps {
  sessions: Pick<SessionStore, 'get'>;
  /**
   * Asks the device's holder to look numbers up. Without sessions of its own: the session is
   * checked once, before the cache is read (not again when the holder is asked).
   */
  holder: DeviceHolder;
  /** The device's answers so far; the holder writes its lookups' answers there. */
  cache: Pick<ContactCache, 'getMany'>;
  /** The device's daily lookup cap. */
  cap: Pick<ContactLookupCap, 'take'>;
  /** Counts the numbers by outcome (cache_hit, looked_up, capped). */
  lookups: Metrics['contactLookups'];
  /** How many numbers one WhatsApp query asks, and the pause between queries. */
  batchSize: number;
  pauseMs: number;
}

/** How a check went. */
export type NumberCheckOutcome =
  /** Every number answered, in the request's order. */
  | { ok: true; data: { results: ContactCheckResult[] } }
  /** The numbers not cached would pass the daily cap: none was looked up. */
  | { ok: false; reason: 'capped'; resetInSeconds: number }
  /** The holder looked them up, but an answer expired before it was read (a TTL shorter than the check). */
  | { ok: false; reason: 'answers_expired' }
  /** The session is not connected (`no_device`), or the lookup ask failed. */
  | HolderFailure;

/**
 * Whether each number is on WhatsApp, in the request's order (a number listed twice is answered
 * twice, looked up once). Answers come from the device's contact cache; the numbers it does not
 * know are counted against the device's daily lookup cap (all or none) and looked up by the sender
 * that holds the device (a device command, like a media download), in paced batches; their answers
 * land in the cache.
 */
export async function checkNumbers(
  deps: NumberCheckDeps,
  deviceId: string,
  phones: string[],
): Promise<NumberCheckOutcome> {
  const session = await deps.sessions.get(deviceId);
  if (session.status !== 'connected') return { ok: false, reason: 'no_device' };

  const answers = await deps.cache.getMany(deviceId, phones);
  const unknown = [...new Set(phones)].filter((phone) => !answers.has(phone));
  deps.lookups.inc({ outcome: 'cache_hit' }, answers.size);
  if (unknown.length > 0) {
    const allowance = await deps.cap.take(deviceId, unknown.length);
    if (!allowance.granted) {
      deps.lookups.inc({ outcome: 'capped' }, unknown.length);
      return { ok: false, reason: 'capped', resetInSeconds: allowance.resetInSeconds };
    }
    deps.lookups.inc({ outcome: 'looked_up' }, unknown.length);
    const found = await lookUp(deps, deviceId, unknown);
    if (!found.ok) return found;
    for (const [phone, answer] of found.data) answers.set(phone, answer);
  }
  return { ok: true, data: { results: phones.map((p) => result(p, answers.get(p)!)) } };
}

/** Has the device's holder look `phones` up, then reads their answers from the cache. */
async function lookUp(
  deps: NumberCheckDeps,
  deviceId: string,
  phones: string[],
): Promise<{ ok: true; data: Map<string, ContactAnswer> } | Exclude<NumberCheckOutcome, { ok: true }>> {
  const { batchSize, pauseMs } = deps;
  const queries = Math.ceil(phones.length / batchSize);
  const waitSeconds = queries * QUERY_BUDGET_SECONDS + ((queries - 1) * pauseMs) / 1000 + EXTRA_WAIT_SECONDS;
  const asked = await askHolder(
    deps.holder,
    deviceId,
    { type: 'check-contacts', phones, batchSize, pauseMs },
    { wait: Math.ceil(waitSeconds), okWithoutData: true },
  );
  if (!asked.ok) return asked;
  const found = await deps.cache.getMany(deviceId, phones);
  // An answer that expired in between (a TTL shorter than the check) is not invented.
  if (found.size !== phones.length) return { ok: false, reason: 'answers_expired' };
  return { ok: true, data: found };
}

function result(phone: string, answer: ContactAnswer): ContactCheckResult {
  return {
    phone,
    onWhatsApp: answer.onWhatsApp,
    ...(answer.lid ? { lid: answer.lid } : {}),
    ...(answer.onWhatsApp && answer.jid ? { phoneJid: answer.jid } : {}),
  };
}
