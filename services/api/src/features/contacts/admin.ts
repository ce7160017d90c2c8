import type { RequestHandler } from 'express';
import { ADMIN_JSON, type AdminRoute } from '../../http/route-table.js';

export type ContactAdminName = 'adminUsername';

/**
 * A device's contacts for the dashboard (docs/usernames.md): POST …/contacts/username, the public
 * POST /contacts/username with the device named by the path. A lookup counts against the device's
 * daily lookup cap as the public one does.
 */
export const contactAdminRoutes: AdminRoute<ContactAdminName>[] = [
  {
    surface: 'admin',
    method: 'post',
    path: '/devices/:deviceId/contacts/username',
    body: ADMIN_JSON,
    handler: 'adminUsername',
    console: 'admin',
  },
];

/**
 * The admin route's handler: the public one built for the device the path names (mount.ts builds
 * it: `contactRoutes(s, deviceIdOf)`).
 */
export function contactAdminHandlers(forPathDevice: {
  username: RequestHandler;
}): Record<ContactAdminName, RequestHandler> {
  return { adminUsername: forPathDevice.username };
}
