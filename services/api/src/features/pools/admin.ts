import type { Request, RequestHandler } from 'express';
import { Joi } from '@mgw/contracts';
import {
  DEFAULT_WORKSPACE,
  DEVICE_ID_PATTERN,
  POOL_ID_PATTERN,
  WORKSPACE_ID_PATTERN,
  emptyQuerySchema,
} from '@mgw/contracts';
import { POOL_LIMITS, PoolStore } from '@mgw/store';
import type { Uses } from '../../api-services.js';
import { ApiError } from '../../http/api-error.js';
import { ADMIN_ERRORS } from '../../http/admin-errors.js';
import type { AdminRoute, BodySpec } from '../../http/route-table.js';
import { adminScopeOf } from '../../http/session/console-scope.js';
import { parse } from '../../http/validation.js';
import type { WorkspaceCache } from '../../http/workspace-cache.js';
import { devicesDeps, type DevicesServices } from '../devices/index.js';
import { deletePool } from './delete-pool.js';
import { poolDevices } from './pool-devices.js';
import { poolViews, type PoolsDeps } from './pool-views.js';
import { foreignDevices } from './pool-workspace.js';

export type PoolAdminName = 'listPools' | 'createPool' | 'getPool' | 'updatePool' | 'deletePool';

/**
 * The most values a pool body holds: a few fields and up to 100 devices. The admin API's body
 * reader allows 64, fewer than one pool's devices, so pool routes read theirs with this limit
 * (bigger lists still reach joi, whose answer names `devices`).
 */
const POOL_BODY_MAX_VALUES = 64 + 2 * POOL_LIMITS.maxDevices;

/** A pool's body: ADMIN_JSON's bytes, depth and 413 answer, with POOL_BODY_MAX_VALUES values. */
const poolBody: BodySpec = {
  json: {
    limitBytes: 16 * 1024,
    maxValues: POOL_BODY_MAX_VALUES,
    tooLargeError: 'Request body too large: admin bodies are limited to 16 KB',
  },
};

/**
 * Pools: named sets of devices one list is spread over (docs/pools.md), each of one workspace and
 * of its devices only. A workspace's console (docs/workspaces.md "The console") lists and reads its
 * pools; its admin creates, changes and deletes them.
 */
export const poolAdminRoutes: AdminRoute<PoolAdminName>[] = [
  { surface: 'admin', method: 'get', path: '/pools', handler: 'listPools', console: 'read' },
  {
    surface: 'admin',
    method: 'post',
    path: '/pools',
    body: poolBody,
    handler: 'createPool',
    console: 'admin',
  },
  { surface: 'admin', method: 'get', path: '/pools/:poolId', handler: 'getPool', console: 'read' },
  {
    surface: 'admin',
    method: 'patch',
    path: '/pools/:poolId',
    body: poolBody,
    handler: 'updatePool',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'delete',
    path: '/pools/:poolId',
    body: 'none',
    handler: 'deletePool',
    console: 'admin',
  },
];

/**
 * The handlers of the rows, over the pools' store, the API tokens (a pool in use is not deleted),
 * the one device directory of these services (devicesDeps) and the pooled send's view of the
 * devices (who takes a share).
 */
export function poolAdminHandlers(
  s: DevicesServices & Uses<'redis' | 'tokens' | 'config' | 'workspaceCache'>,
): Record<PoolAdminName, RequestHandler> {
  const d: PoolsDeps = {
    pools: new PoolStore(s.redis),
    tokens: s.tokens,
    devices: devicesDeps(s),
    spread: (ids: string[]) => poolDevices(s.redis, ids, s.config.sendPolicy, s.config.pools.minHealth),
  };
  return {
    listPools: listPoolsRoute(d),
    createPool: createPoolRoute(d, s.workspaceCache),
    getPool: getPoolRoute(d),
    updatePool: updatePoolRoute(d, s.workspaceCache),
    deletePool: deletePoolRoute(d),
  };
}

/** Success message of DELETE /pools/:poolId. */
const POOL_DELETED = 'Pool deleted';

const SLUG_RULE = '1-32 characters of a-z, 0-9, _ or -, starting with a letter or digit';

const poolIdSchema = Joi.string()
  .pattern(POOL_ID_PATTERN)
  .messages({ 'string.pattern.base': `{{#label}} must be a pool id: ${SLUG_RULE}` });

const nameSchema = Joi.string().trim().min(1).max(POOL_LIMITS.maxNameLength).displayName();

/** Distinct device ids; a device not linked yet is allowed (it may be linked later). */
const devicesSchema = Joi.array()
  .items(
    Joi.string()
      .pattern(DEVICE_ID_PATTERN)
      .messages({ 'string.pattern.base': `{{#label}} must be a device id: ${SLUG_RULE}` }),
  )
  .min(POOL_LIMITS.minDevices)
  .max(POOL_LIMITS.maxDevices)
  .unique()
  .messages({ 'array.unique': '{{#label}} names a device twice' });

export const createPoolSchema = Joi.object<{
  id: string;
  name: string;
  devices: string[];
  workspace?: string;
  otpFallback?: boolean;
}>({
  id: poolIdSchema.required(),
  name: nameSchema.required(),
  devices: devicesSchema.required(),
  // An OTP to a paused or restricted linked device of the pool goes out through its cloud device.
  otpFallback: Joi.boolean().strict(),
  // The operator's: the workspace the pool is made for (default when absent).
  workspace: Joi.string()
    .pattern(WORKSPACE_ID_PATTERN)
    .messages({ 'string.pattern.base': `{{#label}} must be a workspace id: ${SLUG_RULE}` }),
});

export const updatePoolSchema = Joi.object<{ name?: string; devices?: string[]; otpFallback?: boolean }>({
  name: nameSchema,
  devices: devicesSchema,
  otpFallback: Joi.boolean().strict(),
}).or('name', 'devices', 'otpFallback');

/** The pool the path names (a 400 when it is no pool id). */
function poolIdOf(req: Request): string {
  return parse(Joi.object({ poolId: poolIdSchema.required() }).unknown(true), req.params).poolId as string;
}

/** GET /pools — a console's: its workspace's pools only. */
function listPoolsRoute(d: PoolsDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const scope = adminScopeOf(res);
    const all = await d.pools.list();
    const pools = scope ? all.filter((p) => p.workspace === scope.workspace) : all;
    res.status(200).json({ success: true, pools: await poolViews(d, pools) });
  };
}

type Owners = Pick<WorkspaceCache, 'get' | 'ownerOf'>;

/**
 * 400 `Device not found` naming each device of `devices` that `workspace` does not own (another
 * workspace's and, but for default, one nobody has: the same answer).
 */
async function checkDevices(owners: Owners, workspace: string, devices: readonly string[]): Promise<void> {
  const foreign = await foreignDevices(owners, workspace, devices);
  if (foreign.length === 0) return;
  throw new ApiError(
    400,
    ADMIN_ERRORS.deviceNotFound,
    foreign.map((i) => ({
      path: ['devices', i],
      message: `"devices[${i}]" names no device of the pool's workspace`,
    })),
  );
}

/**
 * POST /pools `{ id, name, devices, workspace?, otpFallback? }` — 201 with the pool; 409 when the id is taken (pool
 * ids are the install's: docs/workspaces.md "The console"). A console's pool is its workspace's; the
 * operator names the workspace (default: `default`). Every device must be that workspace's.
 */
function createPoolRoute(d: PoolsDeps, owners: Owners): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const body = parse(createPoolSchema, req.body ?? {});
    const scope = adminScopeOf(res);
    const workspace = scope?.workspace ?? body.workspace ?? DEFAULT_WORKSPACE;
    const named = body.workspace ?? workspace;
    if (named !== workspace || (workspace !== DEFAULT_WORKSPACE && !(await owners.get(workspace))))
      throw new ApiError(400, ADMIN_ERRORS.workspaceNotFound, [
        { path: ['workspace'], message: '"workspace" names no workspace the pool can be made for' },
      ]);
    await checkDevices(owners, workspace, body.devices);
    const created = await d.pools.create({ ...body, workspace });
    if (created === 'exists') throw new ApiError(409, ADMIN_ERRORS.poolExists);
    req.log.info('admin created a pool', {
      poolId: created.id,
      devices: created.devices.length,
      workspaceId: workspace,
    });
    const [pool] = await poolViews(d, [created]);
    res.status(201).json({ success: true, pool });
  };
}

/** GET /pools/:poolId */
function getPoolRoute(d: PoolsDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const found = await d.pools.get(poolIdOf(req));
    if (!found) throw new ApiError(404, ADMIN_ERRORS.poolNotFound);
    const [pool] = await poolViews(d, [found]);
    res.status(200).json({ success: true, pool });
  };
}

/**
 * PATCH /pools/:poolId `{ name?, devices?, otpFallback? }` (at least one): `devices` replaces the whole set, each
 * of them the pool's workspace's.
 */
function updatePoolRoute(d: PoolsDeps, owners: Owners): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const poolId = poolIdOf(req);
    const change = parse(updatePoolSchema, req.body ?? {});
    if (change.devices) {
      const current = await d.pools.get(poolId);
      if (!current) throw new ApiError(404, ADMIN_ERRORS.poolNotFound);
      await checkDevices(owners, current.workspace, change.devices);
    }
    const updated = await d.pools.update(poolId, change);
    if (!updated) throw new ApiError(404, ADMIN_ERRORS.poolNotFound);
    req.log.info('admin changed a pool', { poolId, devices: updated.devices.length });
    const [pool] = await poolViews(d, [updated]);
    res.status(200).json({ success: true, pool });
  };
}

/** DELETE /pools/:poolId — 409 while API tokens send through it (`details` names each). */
function deletePoolRoute(d: PoolsDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const poolId = poolIdOf(req);
    const outcome = await deletePool(d, poolId);
    if (outcome.kind === 'not_found') throw new ApiError(404, ADMIN_ERRORS.poolNotFound);
    if (outcome.kind === 'in_use') {
      throw new ApiError(
        409,
        ADMIN_ERRORS.poolHasTokens,
        outcome.tokens.map((t) => ({
          path: ['tokens', t.id],
          message: `API token ${t.id} (${t.name}) sends through this pool`,
        })),
      );
    }
    req.log.info('admin deleted a pool', { poolId });
    res.status(200).json({ success: true, message: POOL_DELETED });
  };
}
