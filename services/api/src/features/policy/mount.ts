import { feature } from '../../http/route-table.js';
import { policyAdminHandlers, policyAdminRoutes, type PolicyAdminName } from './admin.js';
import { policyAdminOperations } from './openapi.js';

/**
 * A device's sending policy (admin only: the Devices page's, admin.ts). Admin routes are not in
 * the OpenAPI document (docs/dashboard.md describes them), so the feature has no operations.
 */
export const policy = feature<never, PolicyAdminName>({
  name: 'policy',
  routes: policyAdminRoutes,
  handlers: (s) => policyAdminHandlers(s),
  operations: () => ({}),
  adminOperations: policyAdminOperations,
});
