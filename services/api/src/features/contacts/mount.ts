import type { Request, RequestHandler, Response } from 'express';
import {
  ERRORS,
  MAX_CONTACT_CHECK,
  USERNAME_ERRORS,
  contactCheckBodySchema,
  usernameResolveBodySchema,
} from '@mgw/contracts';
import { ContactCache, ContactIdentities, ContactLookupCap } from '@mgw/store';
import type { Uses } from '../../api-services.js';
import { ApiError } from '../../http/api-error.js';
import { authOf } from '../../http/auth.js';
import { NO_DEVICE, answer, type HolderErrors } from '../../http/holder-errors.js';
import { deviceIdOf, noQuery } from '../../http/route-helpers.js';
import { FIELD_ALLOWANCE, feature, type BodySpec } from '../../http/route-table.js';
import { parse } from '../../http/validation.js';
import { contactAdminHandlers, contactAdminRoutes, type ContactAdminName } from './admin.js';
import { checkNumbers, type NumberCheckDeps, type NumberCheckOutcome } from './check-numbers.js';
import { contactOperations, contactSchemas } from './openapi.js';
import {
  resolveUsername,
  type ResolveUsernameDeps,
  type ResolveUsernameOutcome,
} from './resolve-username.js';

/** A number check is at most 1,000 numbers of at most 15 digits: 64 KB is plenty. */
export const CONTACT_CHECK_BODY_LIMIT_BYTES = 64 * 1024;
const checkBody: BodySpec = {
  json: {
    limitBytes: CONTACT_CHECK_BODY_LIMIT_BYTES,
    tooLargeError: ERRORS.contactCheckBodyTooLarge,
    maxValues: MAX_CONTACT_CHECK + FIELD_ALLOWANCE,
    lists: { phones: MAX_CONTACT_CHECK },
  },
};

/** A username lookup: a username and a PIN. */
const usernameBody: BodySpec = {
  json: { limitBytes: 4 * 1024, tooLargeError: USERNAME_ERRORS.bodyTooLarge, maxValues: 8 },
};

/** The public routes' handlers, each the key of its OpenAPI operation (openapi.ts). */
export type ContactName = 'check' | 'username';

/**
 * Which numbers are on WhatsApp, from the contact cache and the holder's lookups (docs/api.md);
 * who has a username (docs/usernames.md), also for the admin API (admin.ts).
 */
export const contacts = feature<ContactName, ContactAdminName>({
  name: 'contacts',
  routes: [
    { method: 'post', path: '/contacts/check', limit: 'contacts', body: checkBody, handler: 'check' },
    {
      method: 'post',
      path: '/contacts/username',
      limit: 'contacts',
      body: usernameBody,
      handler: 'username',
    },
    ...contactAdminRoutes,
  ],
  handlers: (s) => ({
    check: checkRoute(s),
    ...contactRoutes(s),
    // The admin API's: the username lookup for the device its path names.
    ...contactAdminHandlers(contactRoutes(s, deviceIdOf)),
  }),
  operations: contactOperations,
  schemas: contactSchemas,
});

/** How a lookup ask fails in HTTP: whatever the holder answered, the lookup failed. */
const LOOKUP_HOLDER_ERRORS: HolderErrors = {
  no_device: NO_DEVICE,
  timeout: { status: 504, error: ERRORS.contactLookupTimeout },
  not_connected: { status: 502, error: ERRORS.contactLookupFailed },
  failed: { status: 502, error: ERRORS.contactLookupFailed },
};

/** The check's answer, or the contract's error for why there is none. */
function checked(outcome: NumberCheckOutcome) {
  if (outcome.ok) return outcome.data;
  switch (outcome.reason) {
    case 'capped':
      throw new ApiError(429, ERRORS.rateLimited, undefined, { resetIn: outcome.resetInSeconds });
    case 'answers_expired':
      throw new ApiError(502, ERRORS.contactLookupFailed);
    default:
      return answer<never>(outcome, LOOKUP_HOLDER_ERRORS);
  }
}

/**
 * POST /contacts/check: whether each number is on WhatsApp (see check-numbers.ts); a check over
 * the device's daily lookup cap is a 429 with `resetIn`.
 */
function checkRoute(s: Uses<'config' | 'sessions' | 'commands' | 'redis' | 'metrics'>): RequestHandler {
  // Checks are rare and bounded in time: each wait may take a connection of its own.
  const { lookupsPerDay, batchSize, pauseMs } = s.config.contactCheck;
  const deps: NumberCheckDeps = {
    sessions: s.sessions,
    holder: { commands: s.commands },
    cache: new ContactCache(s.redis),
    cap: new ContactLookupCap(s.redis, lookupsPerDay),
    lookups: s.metrics.contactLookups,
    batchSize,
    pauseMs,
  };
  return async (req, res) => {
    const { deviceId } = authOf(res);
    noQuery(req);
    const { phones } = parse(contactCheckBodySchema, req.body ?? {}, { phones: MAX_CONTACT_CHECK });
    res.status(200).json({ success: true, data: checked(await checkNumbers(deps, deviceId, phones)) });
  };
}

/** How a username lookup's ask fails in HTTP. */
const USERNAME_HOLDER_ERRORS: HolderErrors = {
  no_device: NO_DEVICE,
  timeout: { status: 504, error: USERNAME_ERRORS.lookupTimeout },
  not_connected: { status: 502, error: USERNAME_ERRORS.lookupFailed },
  failed: { status: 502, error: USERNAME_ERRORS.lookupFailed },
};

/** A username lookup's answer, or the contract's error for why there is none. */
export function resolved(outcome: ResolveUsernameOutcome) {
  if (outcome.ok) return outcome.data;
  if (outcome.reason === 'capped')
    throw new ApiError(429, ERRORS.rateLimited, undefined, { resetIn: outcome.resetInSeconds });
  return answer<never>(outcome, USERNAME_HOLDER_ERRORS);
}

/**
 * What a username lookup needs: the holder, the device's lookup cap and its map (a /send to a
 * username looks it up too: index.ts).
 */
export function usernameLookupDeps(
  s: Uses<'sessions' | 'commands' | 'redis' | 'config' | 'metrics'>,
): ResolveUsernameDeps {
  return {
    sessions: s.sessions,
    holder: { commands: s.commands, sessions: s.sessions },
    cap: new ContactLookupCap(s.redis, s.config.contactCheck.lookupsPerDay),
    lookups: s.metrics.contactLookups,
    identities: new ContactIdentities(s.redis),
  };
}

/**
 * POST /contacts/username (resolve-username.ts): who has a username, asked of WhatsApp; a lookup
 * counts against the device's daily lookup cap (429 with `resetIn` over it). The admin API serves
 * it too (admin.ts), with the device named by the path.
 */
function contactRoutes(
  s: Uses<'sessions' | 'commands' | 'redis' | 'config' | 'metrics'>,
  /** The device a request acts on: the token's (public API), or the path's (admin API). */
  deviceOf: (req: Request, res: Response) => string = (_req, res) => authOf(res).deviceId,
): Record<'username', RequestHandler> {
  const deps = usernameLookupDeps(s);
  const username: RequestHandler = async (req, res) => {
    const deviceId = deviceOf(req, res);
    noQuery(req);
    const body = parse(usernameResolveBodySchema, req.body ?? {});
    res.status(200).json({ success: true, data: resolved(await resolveUsername(deps, deviceId, body)) });
  };
  return { username };
}
