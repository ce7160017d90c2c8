import type { RequestHandler } from 'express';
import type { ApiServices } from '../api-services.js';
import type { DevicesDeps } from './devices/devices.js';
import type { AdminAuth } from '../http/session/admin-auth.js';

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

export { deviceIdOf } from '../http/route-helpers.js';
