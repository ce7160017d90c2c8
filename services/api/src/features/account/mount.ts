import { ACCOUNT_ERRORS, PROFILE_LIMITS } from '@mgw/contracts';
import { feature, type BodySpec } from '../../http/route-table.js';
import { accountRoutes } from '../../routes/account.js';
import { accountPaths, accountSchemas } from './openapi.js';

/** The account routes' small bodies: a name and an about, a phone, a presence. */
export const ACCOUNT_BODY_LIMIT_BYTES = 4 * 1024;
/** A profile photo as base64 (PROFILE_LIMITS.photoBytes decoded) and the JSON around it. */
export const PHOTO_BODY_LIMIT_BYTES = Math.ceil(PROFILE_LIMITS.photoBytes / 3) * 4 + 4 * 1024;
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

/**
 * The account itself (docs/account.md): its profile and photo, its presence, contacts' profiles
 * and presence, the blocklist — with their own per-token limit (RATE_LIMIT_ACCOUNT). Pool tokens
 * get 403 (auth.ts: these act on one device).
 */
export const account = feature({
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
  ],
  handlers: (s) => accountRoutes(s),
  paths: accountPaths,
  schemas: accountSchemas,
});
