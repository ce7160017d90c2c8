import { feature } from '../../http/route-table.js';
import { activityAdminHandlers, activityAdminRoutes, type ActivityAdminName } from './admin.js';
import { activityAdminOperations, activityAdminSchemas } from './openapi.js';

/**
 * A device's sending per hour (admin only: the Campaigns page's chart, admin.ts). Admin routes are
 * not in the OpenAPI document, so the feature has no operations.
 */
export const activity = feature<never, ActivityAdminName>({
  name: 'activity',
  routes: activityAdminRoutes,
  handlers: (s) => activityAdminHandlers(s),
  operations: () => ({}),
  adminOperations: activityAdminOperations,
  adminSchemas: activityAdminSchemas,
});
