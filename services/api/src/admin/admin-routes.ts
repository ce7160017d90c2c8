import type { Request, RequestHandler } from 'express';
import { DEVICE_ID_PATTERN, Joi } from '@mgw/contracts';
import type { ApiServices } from '../api-services.js';
import { parse } from '../http/validation.js';
import type { DevicesDeps } from './devices/devices.js';
import type { AdminAuth } from './session/mount.js';

/**
 * One admin route: its path, methods and handlers. The table is the admin API: each capability's
 * `mount.ts` gives its rows, and admin-api.ts mounts them in order.
 */
export interface AdminRoute {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  handlers: RequestHandler[];
}

/**
 * What a capability's rows are made of, built once by admin-api.ts: the services, the sign-in and
 * its guard, the admin bodies (`none`: any body is a 400) and the devices' reads, which the Devices
 * page and the pools' views share (one device directory).
 */
export interface AdminKit {
  s: ApiServices;
  auth: AdminAuth;
  guard: RequestHandler;
  body: RequestHandler;
  /** A pool's body: more values than the other admin bodies hold (pools/mount.ts). */
  poolBody: RequestHandler;
  none: RequestHandler;
  devices: DevicesDeps;
}

/** A capability of the admin API: its rows of the table. */
export type AdminMount = (kit: AdminKit) => AdminRoute[];

const deviceIdSchema = Joi.string().pattern(DEVICE_ID_PATTERN).required().messages({
  'string.pattern.base':
    '"deviceId" must be a device id: 1-32 characters of a-z, 0-9, _ or -, starting with a letter or digit',
});

/** The device a `/devices/:deviceId/…` route names (400 when it is no device id). */
export function deviceIdOf(req: Request): string {
  return parse(Joi.object({ deviceId: deviceIdSchema }).unknown(true), req.params).deviceId as string;
}
