import type { Request, RequestHandler, Response } from 'express';
import {
  ACCOUNT_COMMAND_ERRORS,
  ACCOUNT_ERRORS,
  ERRORS,
  Joi,
  blockBodySchema,
  contactAddressSchema,
  presenceBodySchema,
  profileBodySchema,
  profilePhotoBodySchema,
} from '@mgw/contracts';
import { ContactCache, ContactLookupCap } from '@mgw/store';
import type { Uses } from '../../api-services.js';
import { ApiError } from '../../http/api-error.js';
import { authOf } from '../../http/auth.js';
import { NO_DEVICE, answer, invalidAt, type HolderErrors } from '../../http/holder-errors.js';
import { deviceIdOf, noQuery } from '../../http/route-helpers.js';
import { feature, type BodySpec } from '../../http/route-table.js';
import { parse } from '../../http/validation.js';
import type { AccountDeps, HolderFailure, NotLinked } from './account-deps.js';
import { accountAdminHandlers, accountAdminRoutes, type AccountAdminName } from './admin.js';
import { blockContact } from './block-contact.js';
import type { LookupsCapped } from './contact-lookups.js';
import { getContactProfile } from './get-contact-profile.js';
import { getProfile } from './get-profile.js';
import { listBlocklist } from './list-blocklist.js';
import { accountOperations, accountSchemas, accountAdminOperations } from './openapi.js';
import { removePhoto } from './remove-photo.js';
import { PHOTO_BODY_LIMIT_BYTES, setPhoto, type PhotoRefusal } from './set-photo.js';
import { setPresence } from './set-presence.js';
import { subscribePresence } from './subscribe-presence.js';
import { updateProfile } from './update-profile.js';

/** The account routes' small bodies: a name and an about, a phone, a presence. */
export const ACCOUNT_BODY_LIMIT_BYTES = 4 * 1024;
const body: BodySpec = {
  json: { limitBytes: ACCOUNT_BODY_LIMIT_BYTES, tooLargeError: ACCOUNT_ERRORS.bodyTooLarge, maxValues: 16 },
};
const photoBody: BodySpec = {
  json: {
    limitBytes: PHOTO_BODY_LIMIT_BYTES,
    tooLargeError: ACCOUNT_ERRORS.photoBodyTooLarge,
    maxValues: 16,
  },
};

/** The public routes' handlers, each the key of its OpenAPI operation (openapi.ts). */
export type AccountName =
  | 'getProfile'
  | 'patchProfile'
  | 'putPhoto'
  | 'deletePhoto'
  | 'putPresence'
  | 'contactProfile'
  | 'subscribePresence'
  | 'getBlocklist'
  | 'block'
  | 'unblock';

/**
 * The account itself (docs/account.md): its profile and photo, its presence, contacts' profiles
 * and presence, the blocklist — with their own per-token limit (RATE_LIMIT_ACCOUNT). Pool tokens
 * get 403 (auth.ts: these act on one device). The admin API serves them for any device (admin.ts).
 */
export const account = feature<AccountName, AccountAdminName>({
  name: 'account',
  routes: [
    { method: 'get', path: '/profile', limit: 'account', handler: 'getProfile' },
    { method: 'patch', path: '/profile', limit: 'account', body, handler: 'patchProfile' },
    { method: 'put', path: '/profile/photo', limit: 'account', body: photoBody, handler: 'putPhoto' },
    { method: 'delete', path: '/profile/photo', limit: 'account', body: 'none', handler: 'deletePhoto' },
    { method: 'put', path: '/presence', limit: 'account', body, handler: 'putPresence' },
    { method: 'get', path: '/contacts/:number/profile', limit: 'account', handler: 'contactProfile' },
    {
      method: 'post',
      path: '/contacts/:number/presence',
      limit: 'account',
      body: 'none',
      handler: 'subscribePresence',
    },
    { method: 'get', path: '/blocklist', limit: 'account', handler: 'getBlocklist' },
    { method: 'post', path: '/blocklist', limit: 'account', body, handler: 'block' },
    { method: 'delete', path: '/blocklist/:number', limit: 'account', body: 'none', handler: 'unblock' },
    ...accountAdminRoutes,
  ],
  handlers: (s) => ({
    ...accountRoutes(s),
    // The admin API's: the same handlers for the device its path names, and the presence read.
    ...accountAdminHandlers(s, accountRoutes(s, deviceIdOf)),
  }),
  operations: accountOperations,
  schemas: accountSchemas,
  adminOperations: accountAdminOperations,
});

/**
 * How an account ask fails in HTTP. A photo that is no image names the field it came in (`url`
 * or `base64`).
 */
function accountHolderErrors(photoField: 'url' | 'base64'): HolderErrors {
  return {
    no_device: NO_DEVICE,
    timeout: { status: 504, error: ACCOUNT_ERRORS.timeout },
    not_connected: NO_DEVICE,
    failed: { status: 502, error: ACCOUNT_ERRORS.failed },
    codes: {
      [ACCOUNT_COMMAND_ERRORS.notFound]: { status: 404, error: ACCOUNT_ERRORS.contactNotFound },
      [ACCOUNT_COMMAND_ERRORS.photoNotImage]: invalidAt(photoField, ACCOUNT_ERRORS.photoNotImage),
      [ACCOUNT_COMMAND_ERRORS.photoTooLarge]: { status: 413, error: ACCOUNT_ERRORS.photoTooLarge },
      [ACCOUNT_COMMAND_ERRORS.photoUnreachable]: {
        status: 422,
        error: ACCOUNT_ERRORS.photoUnreachable,
        details: [{ path: ['url'], message: ACCOUNT_ERRORS.photoUnreachable }],
      },
      [ACCOUNT_COMMAND_ERRORS.noName]: { status: 409, error: ACCOUNT_ERRORS.presenceNeedsName },
    },
  };
}

type Refusal = HolderFailure | LookupsCapped | PhotoRefusal | NotLinked;

/** The answer's `data`, or the contract's error for why there is none. */
function accountAnswer<T>(
  outcome: { ok: true; data: T } | Refusal,
  photoField: 'url' | 'base64' = 'base64',
): T {
  if (outcome.ok) return outcome.data;
  switch (outcome.reason) {
    case 'lookups_capped':
      throw new ApiError(429, ERRORS.rateLimited, undefined, { resetIn: outcome.resetInSeconds });
    case 'photo_too_large':
      throw new ApiError(413, ACCOUNT_ERRORS.photoTooLarge);
    case 'photo_not_image':
      throw ApiError.invalid([{ path: ['base64'], message: ACCOUNT_ERRORS.photoNotImage }]);
    case 'not_linked':
      throw new ApiError(409, ERRORS.noDevice);
    default:
      return answer<never>(outcome, accountHolderErrors(photoField));
  }
}

const numberParams = Joi.object({ number: contactAddressSchema });

/**
 * The account routes' handlers; the admin API serves them too (admin.ts), with the device named by
 * the path.
 */
function accountRoutes(
  s: Uses<'commands' | 'sessions' | 'blocklist' | 'redis' | 'config' | 'metrics' | 'encryption'>,
  /** The device a request acts on: the token's (public API), or the path's (admin API). */
  deviceOf: (req: Request, res: Response) => string = (_req, res) => authOf(res).deviceId,
): Record<AccountName, RequestHandler> {
  const deps: AccountDeps = {
    holder: { commands: s.commands, sessions: s.sessions },
    sessions: s.sessions,
    blocklist: s.blocklist,
    cache: new ContactCache(s.redis),
    lookups: new ContactLookupCap(s.redis, s.config.contactCheck.lookupsPerDay),
    metrics: s.metrics,
    redis: s.redis,
    encryption: s.encryption,
  };
  const numberOf = (req: Request) => parse(numberParams, { number: req.params.number }).number as string;
  const ok = (res: Response, data: unknown) => res.status(200).json({ success: true, data });

  const getProfileRoute: RequestHandler = async (req, res) => {
    noQuery(req);
    ok(res, accountAnswer(await getProfile(deps, deviceOf(req, res))));
  };
  const patchProfile: RequestHandler = async (req, res) => {
    noQuery(req);
    const change = parse(profileBodySchema, req.body ?? {});
    ok(res, accountAnswer(await updateProfile(deps, deviceOf(req, res), change)));
  };
  const putPhoto: RequestHandler = async (req, res) => {
    noQuery(req);
    const photo = parse(profilePhotoBodySchema, req.body ?? {});
    const outcome = await setPhoto(deps, deviceOf(req, res), photo);
    ok(res, accountAnswer(outcome, photo.url !== undefined ? 'url' : 'base64'));
  };
  const deletePhoto: RequestHandler = async (req, res) => {
    noQuery(req);
    ok(res, accountAnswer(await removePhoto(deps, deviceOf(req, res))));
  };
  const contactProfile: RequestHandler = async (req, res) => {
    noQuery(req);
    const deviceId = deviceOf(req, res);
    ok(res, accountAnswer(await getContactProfile(deps, deviceId, numberOf(req))));
  };
  const putPresence: RequestHandler = async (req, res) => {
    noQuery(req);
    const { presence } = parse(presenceBodySchema, req.body ?? {});
    ok(res, accountAnswer(await setPresence(deps, deviceOf(req, res), presence)));
  };
  const subscribePresenceRoute: RequestHandler = async (req, res) => {
    noQuery(req);
    const deviceId = deviceOf(req, res);
    ok(res, accountAnswer(await subscribePresence(deps, deviceId, numberOf(req))));
  };
  const getBlocklist: RequestHandler = async (req, res) => {
    noQuery(req);
    ok(res, accountAnswer(await listBlocklist(deps, deviceOf(req, res))));
  };
  const block: RequestHandler = async (req, res) => {
    noQuery(req);
    const deviceId = deviceOf(req, res);
    const { phone } = parse(blockBodySchema, req.body ?? {});
    ok(res, accountAnswer(await blockContact(deps, deviceId, phone, 'block')));
  };
  const unblock: RequestHandler = async (req, res) => {
    noQuery(req);
    const deviceId = deviceOf(req, res);
    ok(res, accountAnswer(await blockContact(deps, deviceId, numberOf(req), 'unblock')));
  };
  return {
    getProfile: getProfileRoute,
    patchProfile,
    putPhoto,
    deletePhoto,
    contactProfile,
    putPresence,
    subscribePresence: subscribePresenceRoute,
    getBlocklist,
    block,
    unblock,
  };
}
