import { feature } from '../../http/route-table.js';
import { optOutAdminHandlers, optOutAdminRoutes, type OptOutAdminName } from './admin.js';
import { optOutAdminOperations, optOutAdminSchemas } from './openapi.js';

/**
 * A device's opt-outs (admin only: the Opt-outs page's, admin.ts). Admin routes are not in the
 * OpenAPI document (docs/dashboard.md describes them), so the feature has no operations.
 */
export const optOuts = feature<never, OptOutAdminName>({
  name: 'opt-outs',
  routes: optOutAdminRoutes,
  handlers: (s) => optOutAdminHandlers(s),
  operations: () => ({}),
  adminOperations: optOutAdminOperations,
  adminSchemas: optOutAdminSchemas,
});
