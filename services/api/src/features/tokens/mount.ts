import { feature } from '../../http/route-table.js';
import { tokenAdminHandlers, tokenAdminRoutes, type TokenAdminName } from './admin.js';
import { tokenAdminOperations, tokenAdminSchemas } from './openapi.js';

/**
 * The API and admin tokens (admin only: the dashboard's Tokens page, admin.ts). Admin routes are
 * not in the OpenAPI document (docs/dashboard.md describes them), so the feature has no operations.
 */
export const tokens = feature<never, TokenAdminName>({
  name: 'tokens',
  routes: tokenAdminRoutes,
  handlers: (s) => tokenAdminHandlers(s),
  operations: () => ({}),
  adminOperations: tokenAdminOperations,
  adminSchemas: tokenAdminSchemas,
});
