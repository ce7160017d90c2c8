import { feature } from '../../http/route-table.js';
import { proxyAdminHandlers, proxyAdminRoutes, type ProxyAdminName } from './admin.js';
import { proxyAdminOperations, proxyAdminSchemas } from './openapi.js';

/**
 * A device's proxy (admin only: the Devices page's, admin.ts; docs/proxies.md). Admin routes are
 * not in the OpenAPI document (docs/dashboard.md describes them), so the feature has no operations.
 */
export const proxies = feature<never, ProxyAdminName>({
  name: 'proxies',
  routes: proxyAdminRoutes,
  handlers: (s) => proxyAdminHandlers(s),
  operations: () => ({}),
  adminOperations: proxyAdminOperations,
  adminSchemas: proxyAdminSchemas,
});
