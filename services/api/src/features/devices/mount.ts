import { feature } from '../../http/route-table.js';
import { deviceAdminHandlers, deviceAdminRoutes, type DeviceAdminName } from './admin.js';

/**
 * The devices (admin only): the dashboard's Devices and Messages pages (admin.ts). Admin routes are
 * not in the OpenAPI document (docs/dashboard.md describes them), so the feature has no operations.
 */
export const devices = feature<never, DeviceAdminName>({
  name: 'devices',
  routes: deviceAdminRoutes,
  handlers: (s) => deviceAdminHandlers(s),
  operations: () => ({}),
});
