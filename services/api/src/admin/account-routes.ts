import type { Request, RequestHandler } from 'express';
import { ACCOUNT_ERRORS } from '@mgw/contracts';
import type { ApiServices } from '../api-services.js';
import { jsonBody } from '../http/body.js';
import { accountRoutes } from '../routes/account.js';
import { PHOTO_BODY_LIMIT_BYTES } from '../features/account/mount.js';
import { deviceIdOf } from './devices-routes.js';

/** One row of the admin API's table (admin-api.ts). */
export interface AccountAdminRoute {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  handlers: RequestHandler[];
}

/**
 * A device's profile and blocklist for the dashboard: the public account routes
 * (routes/account.ts, docs/account.md) with the device named by the path, behind the admin guard.
 */
export function accountAdminRoutes(
  s: ApiServices,
  guard: RequestHandler,
  body: RequestHandler,
  none: RequestHandler,
): AccountAdminRoute[] {
  const r = accountRoutes(s, (req: Request) => deviceIdOf(req));
  const photoBody = jsonBody({
    limitBytes: PHOTO_BODY_LIMIT_BYTES,
    tooLargeError: ACCOUNT_ERRORS.photoBodyTooLarge,
    maxDepth: 4,
    maxValues: 16,
    idleTimeoutMs: s.config.http.bodyIdleTimeoutMs,
  });
  const device = '/devices/:deviceId';
  return [
    { method: 'get', path: `${device}/profile`, handlers: [guard, r.getProfile] },
    { method: 'patch', path: `${device}/profile`, handlers: [guard, body, r.patchProfile] },
    { method: 'put', path: `${device}/profile/photo`, handlers: [guard, photoBody, r.putPhoto] },
    { method: 'delete', path: `${device}/profile/photo`, handlers: [guard, none, r.deletePhoto] },
    { method: 'get', path: `${device}/blocklist`, handlers: [guard, r.getBlocklist] },
    { method: 'post', path: `${device}/blocklist`, handlers: [guard, body, r.block] },
    { method: 'delete', path: `${device}/blocklist/:number`, handlers: [guard, none, r.unblock] },
  ];
}
