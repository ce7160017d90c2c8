import type { RequestHandler } from 'express';
import {
  DEVICE_ID_PATTERN,
  Joi,
  POOL_ID_PATTERN,
  WORKSPACE_ID_PATTERN,
  emptyQuerySchema,
} from '@mgw/contracts';
import { QUOTA_NAMES, WORKSPACE_LIMITS, WORKSPACE_STATUSES } from '@mgw/store';
import type { Uses } from '../../api-services.js';
import { ApiError } from '../../http/api-error.js';
import { ADMIN_ERRORS } from '../../http/admin-errors.js';
import { ADMIN_JSON, type AdminRoute } from '../../http/route-table.js';
import { adminScopeOf } from '../../http/session/console-scope.js';
import { parse } from '../../http/validation.js';
import { tokenView } from '../tokens/index.js';
import { expiresIn, quotaReached, sendUsage, usageRange } from './bodies.js';
import {
  createDevice,
  createWorkspaceToken,
  listDevices,
  showDevice,
  showWorkspace,
  workspaceView,
  type WorkspaceDeps,
} from './workspaces.js';
import { readUsage } from './usage.js';

export type WorkspaceAdminName =
  | 'listWorkspaces'
  | 'createWorkspace'
  | 'getWorkspaceAdmin'
  | 'updateWorkspace'
  | 'workspaceDevices'
  | 'giveDevice'
  | 'workspaceUsage'
  | 'createWorkspaceToken'
  | 'createWorkspaceDevice';

/**
 * The operator's side of workspaces (docs/workspaces.md): every workspace listed, one created,
 * renamed, suspended or resumed, its quotas set, its usage read; its devices listed and an existing device given
 * to it; a token of it minted (its first workspace token, for its people to take over from).
 * A workspace's console (docs/workspaces.md "The console") reads its own record, devices and usage,
 * and its admin creates its devices and tokens; creating workspaces, changing one (its status and
 * quotas) and giving one a device the operator names stay the operator's (no `console`).
 */
export const workspaceAdminRoutes: AdminRoute<WorkspaceAdminName>[] = [
  { surface: 'admin', method: 'get', path: '/workspaces', handler: 'listWorkspaces', console: 'read' },
  // The operator's only: a workspace is made by the operator.
  { surface: 'admin', method: 'post', path: '/workspaces', body: ADMIN_JSON, handler: 'createWorkspace' },
  {
    surface: 'admin',
    method: 'get',
    path: '/workspaces/:workspaceId',
    handler: 'getWorkspaceAdmin',
    console: 'read',
  },
  // The operator's only: a workspace's name, status and quotas are the operator's to set.
  {
    surface: 'admin',
    method: 'patch',
    path: '/workspaces/:workspaceId',
    body: ADMIN_JSON,
    handler: 'updateWorkspace',
  },
  {
    surface: 'admin',
    method: 'get',
    path: '/workspaces/:workspaceId/devices',
    handler: 'workspaceDevices',
    console: 'read',
  },
  {
    surface: 'admin',
    method: 'get',
    path: '/workspaces/:workspaceId/usage',
    handler: 'workspaceUsage',
    console: 'read',
  },
  // A device of the workspace's own, with a random id, within its device quota.
  {
    surface: 'admin',
    method: 'post',
    path: '/workspaces/:workspaceId/devices',
    body: 'none',
    handler: 'createWorkspaceDevice',
    console: 'admin',
  },
  // The operator's only: a device id the operator names, given to the workspace.
  {
    surface: 'admin',
    method: 'put',
    path: '/workspaces/:workspaceId/devices/:deviceId',
    body: 'none',
    handler: 'giveDevice',
  },
  {
    surface: 'admin',
    method: 'post',
    path: '/workspaces/:workspaceId/tokens',
    body: ADMIN_JSON,
    handler: 'createWorkspaceToken',
    console: 'admin',
  },
];

/** A quota: a whole number from 0 to 10^12, or null (PATCH: no limit any more). */
const quota = Joi.number().integer().min(0).max(WORKSPACE_LIMITS.maxQuota);
const quotas = (allowNull: boolean) =>
  Joi.object(Object.fromEntries(QUOTA_NAMES.map((n) => [n, allowNull ? quota.allow(null) : quota])));
const name = Joi.string().trim().min(1).max(WORKSPACE_LIMITS.maxNameLength).displayName();

export const createWorkspaceSchema = Joi.object<{
  id: string;
  name: string;
  quotas?: Record<string, number>;
}>({
  id: Joi.string().pattern(WORKSPACE_ID_PATTERN).required().messages({
    'string.pattern.base':
      '"id" must be a workspace id: 1-32 characters of a-z, 0-9, _ or -, starting with a letter or digit',
  }),
  name: name.required(),
  quotas: quotas(false),
});

export const updateWorkspaceSchema = Joi.object<{
  name?: string;
  status?: (typeof WORKSPACE_STATUSES)[number];
  quotas?: Record<string, number | null>;
}>({
  name,
  status: Joi.string().valid(...WORKSPACE_STATUSES),
  quotas: quotas(true),
}).min(1);

export const adminTokenSchema = Joi.object<{
  name: string;
  deviceId?: string;
  poolId?: string;
  expiresIn?: string;
}>({
  name: name.required(),
  deviceId: Joi.string().pattern(DEVICE_ID_PATTERN),
  poolId: Joi.string().pattern(POOL_ID_PATTERN),
  expiresIn: expiresIn(),
}).oxor('deviceId', 'poolId');

const WORKSPACE_NOT_FOUND = ADMIN_ERRORS.workspaceNotFound;

export function workspaceAdminHandlers(
  s: Uses<'workspaces' | 'sessions' | 'tokens' | 'usage' | 'workspaceCache'>,
): Record<WorkspaceAdminName, RequestHandler> {
  const deps: WorkspaceDeps = { ...s, pools: { workspaceOf: (id) => s.workspaceCache.poolOwner(id) } };
  /** The workspace a path names, or a 404. */
  const named = async (raw: unknown) => {
    const id = String(raw ?? '');
    const view = await showWorkspace(deps, id);
    if (!view) throw new ApiError(404, WORKSPACE_NOT_FOUND);
    return view;
  };
  return {
    listWorkspaces: async (req, res) => {
      parse(emptyQuerySchema, req.query);
      // A console session lists its own workspace only.
      const scope = adminScopeOf(res);
      const all = scope
        ? [await s.workspaces.get(scope.workspace)].filter((w) => w !== undefined)
        : await s.workspaces.list();
      const views = await Promise.all(
        all.map(async (w) => workspaceView(w, (await s.workspaces.devices(w.id)).length)),
      );
      res.status(200).json({ success: true, workspaces: views });
    },
    createWorkspace: async (req, res) => {
      parse(emptyQuerySchema, req.query);
      const body = parse(createWorkspaceSchema, req.body ?? {});
      const made = await s.workspaces.create(body);
      if (made === 'exists') throw new ApiError(409, 'A workspace with this id already exists');
      req.log.info('admin created a workspace', { workspaceId: made.id });
      res.status(201).json({ success: true, workspace: workspaceView(made, 0) });
    },
    getWorkspaceAdmin: async (req, res) => {
      parse(emptyQuerySchema, req.query);
      res.status(200).json({ success: true, workspace: await named(req.params.workspaceId) });
    },
    updateWorkspace: async (req, res) => {
      parse(emptyQuerySchema, req.query);
      const body = parse(updateWorkspaceSchema, req.body ?? {});
      const { id } = await named(req.params.workspaceId);
      await s.workspaces.update(id, body);
      req.log.info('admin changed a workspace', { workspaceId: id, status: body.status });
      res.status(200).json({ success: true, workspace: await named(id) });
    },
    workspaceDevices: async (req, res) => {
      parse(emptyQuerySchema, req.query);
      const { id } = await named(req.params.workspaceId);
      res.status(200).json({ success: true, devices: await listDevices(deps, id) });
    },
    workspaceUsage: async (req, res) => {
      const range = usageRange(req.query);
      const { id } = await named(req.params.workspaceId);
      const view = await readUsage(s.usage, id, range);
      sendUsage(res, view, range.csv, 'usage');
    },
    giveDevice: async (req, res) => {
      parse(emptyQuerySchema, req.query);
      const view = await named(req.params.workspaceId);
      const { id } = view;
      const deviceId = String(req.params.deviceId ?? '');
      if (!DEVICE_ID_PATTERN.test(deviceId)) throw new ApiError(404, ADMIN_ERRORS.deviceNotFound);
      const given = await s.workspaces.addDevice(id, deviceId);
      if (given === 'taken') {
        throw new ApiError(
          409,
          'This device belongs to another workspace (or to default, where it is in use)',
        );
      }
      if (given === 'quota') {
        throw quotaReached('devices', s.workspaces.deviceLimit(view) ?? 0);
      }
      if (given === 'no_workspace') throw new ApiError(404, WORKSPACE_NOT_FOUND);
      req.log.info('admin gave a device to a workspace', { workspaceId: id, deviceId });
      res.status(200).json({ success: true, devices: await listDevices(deps, id) });
    },
    createWorkspaceDevice: async (req, res) => {
      parse(emptyQuerySchema, req.query);
      const view = await named(req.params.workspaceId);
      const { id } = view;
      const made = await createDevice(deps, id);
      if (made === 'quota') throw quotaReached('devices', s.workspaces.deviceLimit(view) ?? 0);
      if (made === 'no_workspace') throw new ApiError(404, WORKSPACE_NOT_FOUND);
      req.log.info('admin created a device of a workspace', { workspaceId: id, deviceId: made.deviceId });
      res.status(201).json({ success: true, device: await showDevice(deps, id, made.deviceId) });
    },
    createWorkspaceToken: async (req, res) => {
      parse(emptyQuerySchema, req.query);
      const body = parse(adminTokenSchema, req.body ?? {});
      const { id } = await named(req.params.workspaceId);
      const made = await createWorkspaceToken(deps, id, body);
      if (made === 'device_not_found') {
        throw new ApiError(400, ADMIN_ERRORS.deviceNotFound, [
          { path: ['deviceId'], message: 'deviceId names no device of this workspace' },
        ]);
      }
      if (made === 'pool_not_found') {
        throw new ApiError(400, ADMIN_ERRORS.poolNotFound, [
          { path: ['poolId'], message: 'poolId names no pool of this workspace' },
        ]);
      }
      if (made === 'limit') throw quotaReached('tokens', s.workspaces.ceilings.tokens);
      req.log.info('admin created a workspace token', { workspaceId: id, tokenId: made.token.id });
      res.setHeader('Cache-Control', 'no-store');
      res.status(201).json({ success: true, token: tokenView(made.token), value: made.value });
    },
  };
}
