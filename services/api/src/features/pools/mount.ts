import { feature } from '../../http/route-table.js';
import { poolAdminHandlers, poolAdminRoutes, type PoolAdminName } from './admin.js';
import { poolAdminOperations, poolAdminSchemas } from './openapi.js';

/**
 * Pools (admin only): named sets of devices one batch is spread over (docs/pools.md), kept on the
 * dashboard's Pools page (admin.ts). A pool token's sends and batch controls are the send and
 * batches features' routes (pool-send.ts, pool-control.ts); admin routes are not in the OpenAPI
 * document, so the feature has no operations.
 */
export const pools = feature<never, PoolAdminName>({
  name: 'pools',
  routes: poolAdminRoutes,
  handlers: (s) => poolAdminHandlers(s),
  operations: () => ({}),
  adminOperations: poolAdminOperations,
  adminSchemas: poolAdminSchemas,
});
