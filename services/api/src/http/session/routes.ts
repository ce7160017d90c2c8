import { ApiError } from '../api-error.js';
import { ERRORS } from '@mgw/contracts';
import { ADMIN_JSON, feature } from '../route-table.js';
import { sessionOperations, sessionSchemas, type SessionName } from './openapi.js';

/**
 * The admin API's sign-in, who is signed in, and sign-out (admin-auth.ts), and the operator's
 * view of one workspace as it sees itself (docs/workspaces.md "The console"). The sign-in is the
 * only admin route without the guard; every session may call these (`console: 'session'`: the
 * handlers say who may do what). Their operations are the admin document's (openapi.ts).
 */
export const session = feature<never, SessionName>({
  name: 'session',
  routes: [
    {
      surface: 'admin',
      method: 'post',
      path: '/session',
      auth: 'none',
      body: ADMIN_JSON,
      handler: 'signIn',
      console: 'session',
    },
    { surface: 'admin', method: 'get', path: '/session', handler: 'whoAmI', console: 'session' },
    {
      surface: 'admin',
      method: 'delete',
      path: '/session',
      body: 'none',
      handler: 'signOut',
      console: 'session',
    },
    {
      surface: 'admin',
      method: 'put',
      path: '/session/workspace',
      body: ADMIN_JSON,
      handler: 'viewWorkspace',
      console: 'session',
    },
    {
      surface: 'admin',
      method: 'delete',
      path: '/session/workspace',
      body: 'none',
      handler: 'leaveWorkspace',
      console: 'session',
    },
  ],
  handlers: (_s, { adminAuth }) => {
    // Mounted only with the admin API on; a mistake in the wiring is a 404, never an open route.
    if (!adminAuth) {
      const off = () => {
        throw new ApiError(404, ERRORS.notFound);
      };
      return { signIn: off, whoAmI: off, signOut: off, viewWorkspace: off, leaveWorkspace: off };
    }
    return {
      signIn: adminAuth.signIn(),
      whoAmI: adminAuth.whoAmI(),
      signOut: adminAuth.signOut(),
      viewWorkspace: adminAuth.viewWorkspace(),
      leaveWorkspace: adminAuth.viewWorkspace(true),
    };
  },
  operations: () => ({}),
  adminOperations: (_config, op) => sessionOperations(op),
  adminSchemas: sessionSchemas,
});
