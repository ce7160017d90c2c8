import { feature } from '../../http/route-table.js';
import { sandboxAdminHandlers, sandboxAdminRoutes, type SandboxAdminName } from './admin.js';
import { sandboxAdminOperations } from './openapi.js';

/**
 * Whether the gateway runs against the simulator (admin only: the linking panel's hint, admin.ts).
 * Admin routes are not in the OpenAPI document, so the feature has no operations.
 */
export const sandbox = feature<never, SandboxAdminName>({
  name: 'sandbox',
  routes: sandboxAdminRoutes,
  handlers: (s) => sandboxAdminHandlers(s),
  operations: () => ({}),
  adminOperations: sandboxAdminOperations,
});
