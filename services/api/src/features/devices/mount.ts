import { feature } from '../../http/route-table.js';
import { deviceAdminHandlers, deviceAdminRoutes, type DeviceAdminName } from './admin.js';
import { deviceAdminOperations, deviceAdminSchemas } from './openapi.js';

/**
 * The devices (admin only): the dashboard's Devices and Messages pages (admin.ts). Its operations are
 * the admin document's (openapi.ts, adminOperations); it has no public route.
 */
export const devices = feature<never, DeviceAdminName>({
  name: 'devices',
  routes: deviceAdminRoutes,
  handlers: (s) => deviceAdminHandlers(s),
  operations: () => ({}),
  adminOperations: deviceAdminOperations,
  adminSchemas: deviceAdminSchemas,
});
