import type { RequestHandler } from 'express';
import { ADMIN_JSON, type AdminRoute } from '../../http/route-table.js';
import type { CloudName } from './mount.js';

/** The admin routes' handlers: the public ones' names with `admin` in front. */
export type CloudAdminName = `admin${Capitalize<CloudName>}`;

const path = '/devices/:deviceId/cloud';

/**
 * A device's Cloud API configuration and its number's templates for the console's device page and
 * automation: the public /cloud routes with the device named by the path. A workspace's console
 * admin may change its own devices' (the number and its token are the workspace's), both roles
 * may read.
 */
export const cloudAdminRoutes: AdminRoute<CloudAdminName>[] = [
  { surface: 'admin', method: 'put', path, body: ADMIN_JSON, handler: 'adminPutCloud', console: 'admin' },
  { surface: 'admin', method: 'get', path, handler: 'adminGetCloud', console: 'read' },
  { surface: 'admin', method: 'delete', path, body: 'none', handler: 'adminDeleteCloud', console: 'admin' },
  {
    surface: 'admin',
    method: 'get',
    path: `${path}/templates`,
    handler: 'adminGetCloudTemplates',
    console: 'read',
  },
];

/** The public routes' handlers built for the device the path names (mount.ts), under their admin names. */
export function cloudAdminHandlers(
  forPathDevice: Record<CloudName, RequestHandler>,
): Record<CloudAdminName, RequestHandler> {
  return {
    adminPutCloud: forPathDevice.putCloud,
    adminGetCloud: forPathDevice.getCloud,
    adminDeleteCloud: forPathDevice.deleteCloud,
    adminGetCloudTemplates: forPathDevice.getCloudTemplates,
  };
}
