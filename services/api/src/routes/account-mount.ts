import type { Express, RequestHandler } from 'express';
import { ACCOUNT_ERRORS, PROFILE_LIMITS } from '@mgw/contracts';
import type { ApiServices } from '../api-services.js';
import { methodNotAllowed } from '../http/api-error.js';
import { jsonBody, noBody } from '../http/body.js';
import { accountRoutes } from './account.js';

/** The account routes' small bodies: a name and an about, a phone, a presence. */
export const ACCOUNT_BODY_LIMIT_BYTES = 4 * 1024;
/** A profile photo as base64 (PROFILE_LIMITS.photoBytes decoded) and the JSON around it. */
export const PHOTO_BODY_LIMIT_BYTES = Math.ceil(PROFILE_LIMITS.photoBytes / 3) * 4 + 4 * 1024;

/**
 * Mounts the account routes (docs/account.md) on `v1` paths: authenticate, their own per-token
 * limit (RATE_LIMIT_ACCOUNT), their body handling, then the route; a known path with another
 * method answers 405. Pool tokens get 403 (auth.ts: these act on one device).
 */
export function mountAccountRoutes(
  app: Express,
  s: ApiServices,
  v1: (path: string) => string,
  auth: RequestHandler,
  limit: RequestHandler,
  opts: { maxDepth: number; idleTimeoutMs: number },
): void {
  const body = jsonBody({
    limitBytes: ACCOUNT_BODY_LIMIT_BYTES,
    tooLargeError: ACCOUNT_ERRORS.bodyTooLarge,
    maxDepth: opts.maxDepth,
    maxValues: 16,
    idleTimeoutMs: opts.idleTimeoutMs,
  });
  const photoBody = jsonBody({
    limitBytes: PHOTO_BODY_LIMIT_BYTES,
    tooLargeError: ACCOUNT_ERRORS.photoBodyTooLarge,
    maxDepth: opts.maxDepth,
    maxValues: 16,
    idleTimeoutMs: opts.idleTimeoutMs,
  });
  const withoutBody = noBody();
  const r = accountRoutes(s);
  app.get(v1('/profile'), auth, limit, r.getProfile);
  app.patch(v1('/profile'), auth, limit, body, r.patchProfile);
  app.put(v1('/profile/photo'), auth, limit, photoBody, r.putPhoto);
  app.delete(v1('/profile/photo'), auth, limit, withoutBody, r.deletePhoto);
  app.put(v1('/presence'), auth, limit, body, r.putPresence);
  app.get(v1('/contacts/:number/profile'), auth, limit, r.contactProfile);
  app.post(v1('/contacts/:number/presence'), auth, limit, withoutBody, r.subscribePresence);
  app.get(v1('/blocklist'), auth, limit, r.getBlocklist);
  app.post(v1('/blocklist'), auth, limit, body, r.block);
  app.delete(v1('/blocklist/:number'), auth, limit, withoutBody, r.unblock);
  const allowed: [string, string][] = [
    ['/profile', 'GET, HEAD, PATCH'],
    ['/profile/photo', 'PUT, DELETE'],
    ['/presence', 'PUT'],
    ['/contacts/:number/profile', 'GET, HEAD'],
    ['/contacts/:number/presence', 'POST'],
    ['/blocklist', 'GET, HEAD, POST'],
    ['/blocklist/:number', 'DELETE'],
  ];
  for (const [path, allow] of allowed) app.all(v1(path), auth, methodNotAllowed(allow));
}
