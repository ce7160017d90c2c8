import type { RequestHandler } from 'express';
import { ERRORS, MAX_CONTACT_CHECK, contactCheckBodySchema } from '@mgw/contracts';
import { ContactCache, ContactLookupCap, DeviceCommandClient, type ContactAnswer } from '@mgw/store';
import { askHolder } from '../features/holder/ask-holder.js';
import { ApiError } from '../http/api-error.js';
import type { ApiServices } from '../api-services.js';
import { authOf } from '../http/auth.js';
import { NO_DEVICE, answer, type HolderErrors } from '../http/holder-errors.js';
import { noQuery } from '../http/route-helpers.js';
import { parse } from '../http/validation.js';

/** The longest one WhatsApp query may take before the API stops waiting for the whole check. */
const QUERY_BUDGET_SECONDS = 20;
/** Room for the command's way there and back, and for a check of the device queued before this one. */
const EXTRA_WAIT_SECONDS = 15;

/** How a lookup ask fails in HTTP: whatever the holder answered, the lookup failed. */
const LOOKUP_HOLDER_ERRORS: HolderErrors = {
  no_device: NO_DEVICE,
  timeout: { status: 504, error: ERRORS.contactLookupTimeout },
  not_connected: { status: 502, error: ERRORS.contactLookupFailed },
  failed: { status: 502, error: ERRORS.contactLookupFailed },
};

export interface ContactCheckResult {
  phone: string;
  onWhatsApp: boolean;
  lid?: string;
}

/**
 * POST /contacts/check: whether each number is on WhatsApp, in the request's order (a number
 * listed twice is answered twice, looked up once). Answers come from the device's contact cache;
 * the numbers it does not know are counted against the device's daily lookup cap (all or none: a
 * check over it is a 429 with `resetIn`) and looked up by the sender that holds the device (a
 * device command, like a media download), in paced batches; their answers land in the cache.
 */
export function contactCheckRoute(s: ApiServices): RequestHandler {
  // Checks are rare and bounded in time: each wait may take a connection of its own. The session
  // is checked once, before the cache is read (not again when the holder is asked).
  const holder = { commands: new DeviceCommandClient(s.redis, s.bullRedis) };
  const cache = new ContactCache(s.redis);
  const { lookupsPerDay, batchSize, pauseMs } = s.config.contactCheck;
  const cap = new ContactLookupCap(s.redis, lookupsPerDay);
  const counted = s.metrics.contactLookups;
  return async (req, res) => {
    const { deviceId } = authOf(res);
    noQuery(req);
    const { phones } = parse(contactCheckBodySchema, req.body ?? {}, { phones: MAX_CONTACT_CHECK });
    const session = await s.sessions.get(deviceId);
    if (session.status !== 'connected') throw new ApiError(409, ERRORS.noDevice);

    const answers = await cache.getMany(deviceId, phones);
    const unknown = [...new Set(phones)].filter((phone) => !answers.has(phone));
    counted.inc({ outcome: 'cache_hit' }, answers.size);
    if (unknown.length > 0) {
      const allowance = await cap.take(deviceId, unknown.length);
      if (!allowance.granted) {
        counted.inc({ outcome: 'capped' }, unknown.length);
        throw new ApiError(429, ERRORS.rateLimited, undefined, { resetIn: allowance.resetInSeconds });
      }
      counted.inc({ outcome: 'looked_up' }, unknown.length);
      for (const [phone, answer] of await lookUp(deviceId, unknown)) answers.set(phone, answer);
    }
    res.status(200).json({ success: true, data: { results: phones.map((p) => result(p, answers.get(p)!)) } });
  };

  /** Has the device's holder look `phones` up, then reads their answers from the cache. */
  async function lookUp(deviceId: string, phones: string[]): Promise<Map<string, ContactAnswer>> {
    const queries = Math.ceil(phones.length / batchSize);
    const waitSeconds =
      queries * QUERY_BUDGET_SECONDS + ((queries - 1) * pauseMs) / 1000 + EXTRA_WAIT_SECONDS;
    answer(
      await askHolder(
        holder,
        deviceId,
        { type: 'check-contacts', phones, batchSize, pauseMs },
        { wait: Math.ceil(waitSeconds), okWithoutData: true },
      ),
      LOOKUP_HOLDER_ERRORS,
    );
    const found = await cache.getMany(deviceId, phones);
    // An answer that expired in between (a TTL shorter than the check) is not invented.
    if (found.size !== phones.length) throw new ApiError(502, ERRORS.contactLookupFailed);
    return found;
  }
}

function result(phone: string, answer: ContactAnswer): ContactCheckResult {
  return { phone, onWhatsApp: answer.onWhatsApp, ...(answer.lid ? { lid: answer.lid } : {}) };
}
