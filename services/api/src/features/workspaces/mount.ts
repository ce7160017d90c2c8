import type { RequestHandler, Response } from 'express';
import { DEVICE_ID_PATTERN, ERRORS, emptyQuerySchema } from '@mgw/contracts';
import type { Uses } from '../../api-services.js';
import { ApiError } from '../../http/api-error.js';
import { authOf } from '../../http/auth.js';
import { noQuery } from '../../http/route-helpers.js';
import { feature } from '../../http/route-table.js';
import { parse } from '../../http/validation.js';
import { tokenView } from '../tokens/index.js';
import { workspaceAdminHandlers, workspaceAdminRoutes, type WorkspaceAdminName } from './admin.js';
import { quotaReached, sendUsage, tokenBody, usageRange, workspaceTokenSchema } from './bodies.js';
import { workspaceOperations, workspaceSchemas, workspaceAdminOperations } from './openapi.js';
import { readUsage } from './usage.js';
import {
  createDevice,
  createWorkspaceToken,
  listDevices,
  listWorkspaceTokens,
  revokeWorkspaceToken,
  showDevice,
  showWorkspace,
  type WorkspaceDeps,
} from './workspaces.js';

export type WorkspaceName =
  | 'getWorkspace'
  | 'getUsage'
  | 'listDevices'
  | 'createDevice'
  | 'getDevice'
  | 'listTokens'
  | 'createToken'
  | 'revokeToken';

/**
 * A workspace as its workspace token sees it (docs/workspaces.md): the workspace and its usage, its devices
 * (listed, created within the quota, one by id), and its tokens (device and workspace tokens,
 * created, listed and revoked). Device and pool tokens get 403 here (their rows' `scope`).
 * Reads count against the status limit, changes against the connect limit. The operator's side —
 * workspaces created, suspended, given quotas and devices — is admin.ts.
 */
export const workspaces = feature<WorkspaceName, WorkspaceAdminName>({
  name: 'workspaces',
  routes: [
    { method: 'get', path: '/workspace', limit: 'status', scope: 'workspace', handler: 'getWorkspace' },
    { method: 'get', path: '/workspace/usage', limit: 'status', scope: 'workspace', handler: 'getUsage' },
    { method: 'get', path: '/devices', limit: 'status', scope: 'workspace', handler: 'listDevices' },
    {
      method: 'post',
      path: '/devices',
      limit: 'connect',
      body: 'none',
      scope: 'workspace',
      handler: 'createDevice',
    },
    { method: 'get', path: '/devices/:deviceId', limit: 'status', scope: 'workspace', handler: 'getDevice' },
    { method: 'get', path: '/tokens', limit: 'status', scope: 'workspace', handler: 'listTokens' },
    {
      method: 'post',
      path: '/tokens',
      limit: 'connect',
      body: tokenBody,
      scope: 'workspace',
      handler: 'createToken',
    },
    {
      method: 'delete',
      path: '/tokens/:tokenId',
      limit: 'connect',
      body: 'none',
      scope: 'workspace',
      handler: 'revokeToken',
    },
    ...workspaceAdminRoutes,
  ],
  handlers: (s) => ({ ...workspaceHandlers(s), ...workspaceAdminHandlers(s) }),
  operations: workspaceOperations,
  schemas: workspaceSchemas,
  adminOperations: workspaceAdminOperations,
});

/** The caller's workspace (auth.ts has refused any token but a workspace token on these routes). */
const workspaceOf = (res: Response): string => authOf(res).workspaceId;

function workspaceHandlers(
  s: Uses<'workspaces' | 'sessions' | 'tokens' | 'usage'>,
): Record<WorkspaceName, RequestHandler> {
  const deps: WorkspaceDeps = s;
  return {
    getWorkspace: async (req, res) => {
      noQuery(req);
      const view = await showWorkspace(deps, workspaceOf(res));
      // The workspace of a valid token exists (auth.ts); one deleted meanwhile is gone for it.
      if (!view) throw new ApiError(404, ERRORS.deviceNotFound);
      res.status(200).json({ success: true, data: view });
    },
    getUsage: async (req, res) => {
      const range = usageRange(req.query);
      const view = await readUsage(s.usage, workspaceOf(res), range);
      sendUsage(res, view, range.csv, 'data');
    },
    listDevices: async (req, res) => {
      noQuery(req);
      res.status(200).json({ success: true, data: await listDevices(deps, workspaceOf(res)) });
    },
    createDevice: async (req, res) => {
      noQuery(req);
      const made = await createDevice(deps, workspaceOf(res));
      if (made === 'quota') {
        const w = await s.workspaces.get(workspaceOf(res));
        throw quotaReached('devices', (w && s.workspaces.deviceLimit(w)) ?? 0);
      }
      if (made === 'no_workspace') throw new ApiError(404, ERRORS.deviceNotFound);
      req.log.info('workspace created a device', { workspaceId: workspaceOf(res), deviceId: made.deviceId });
      res.status(201).json({ success: true, data: await showDevice(deps, workspaceOf(res), made.deviceId) });
    },
    getDevice: async (req, res) => {
      noQuery(req);
      const deviceId = String(req.params.deviceId ?? '');
      const device = DEVICE_ID_PATTERN.test(deviceId)
        ? await showDevice(deps, workspaceOf(res), deviceId)
        : undefined;
      if (!device) throw new ApiError(404, ERRORS.deviceNotFound);
      res.status(200).json({ success: true, data: device });
    },
    listTokens: async (req, res) => {
      parse(emptyQuerySchema, req.query);
      res.status(200).json({ success: true, data: await listWorkspaceTokens(deps, workspaceOf(res)) });
    },
    createToken: async (req, res) => {
      noQuery(req);
      const body = parse(workspaceTokenSchema, req.body ?? {});
      const made = await createWorkspaceToken(deps, workspaceOf(res), body);
      // No pool is named here (the body has no poolId): a pool not found is a device not found.
      if (made === 'device_not_found' || made === 'pool_not_found')
        throw new ApiError(404, ERRORS.deviceNotFound);
      if (made === 'limit') throw quotaReached('tokens', s.workspaces.ceilings.tokens);
      req.log.info('workspace created a token', {
        workspaceId: workspaceOf(res),
        tokenId: made.token.id,
        deviceId: made.token.deviceId,
      });
      res.setHeader('Cache-Control', 'no-store');
      res.status(201).json({ success: true, data: { token: tokenView(made.token), value: made.value } });
    },
    revokeToken: async (req, res) => {
      noQuery(req);
      const id = String(req.params.tokenId ?? '');
      const done = id.length <= 64 ? await revokeWorkspaceToken(deps, workspaceOf(res), id) : 'not_found';
      if (done === 'not_found') throw new ApiError(404, ERRORS.workspaceTokenNotFound);
      req.log.info('workspace revoked a token', { workspaceId: workspaceOf(res), tokenId: id });
      res.status(200).json({ success: true });
    },
  };
}
