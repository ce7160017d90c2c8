import { ApiError } from '../../http/api-error.js';
import { ERRORS } from '@mgw/contracts';
import { feature } from '../../http/route-table.js';
import { consoleAdminHandlers, consoleAdminRoutes, type ConsoleAdminName } from './admin.js';
import { consoleAdminOperations, consoleAdminSchemas } from './openapi.js';

/**
 * A workspace's console (admin only: docs/workspaces.md "The console"): its users, who sign in to
 * the dashboard and see only their workspace, as its admin or its agent (admin.ts, users.ts); their
 * sign-in and sessions are http/session's. Admin routes are not in the OpenAPI document, so the
 * feature has no operations.
 */
export const consoleUsers = feature<never, ConsoleAdminName>({
  name: 'console',
  routes: consoleAdminRoutes,
  handlers: (s, { adminAuth }) => {
    // Mounted only with the admin API on; a mistake in the wiring is a 404, never an open route.
    if (!adminAuth) {
      const off = () => {
        throw new ApiError(404, ERRORS.notFound);
      };
      return { listUsers: off, addUser: off, changeUser: off, removeUser: off };
    }
    return consoleAdminHandlers({
      users: adminAuth.users,
      passwords: adminAuth.passwords,
      workspaces: s.workspaceCache,
      maxUsers: s.config.workspaceCeilings.users,
    });
  },
  operations: () => ({}),
  adminOperations: consoleAdminOperations,
  adminSchemas: consoleAdminSchemas,
});
