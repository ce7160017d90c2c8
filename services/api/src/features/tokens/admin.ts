import type { RequestHandler } from 'express';
import { Joi } from '@mgw/contracts';
import { DEVICE_ID_PATTERN, POOL_ID_PATTERN, emptyQuerySchema } from '@mgw/contracts';
import { ADMIN_TOKENS, PoolStore, TokenStore } from '@mgw/store';
import type { Uses } from '../../api-services.js';
import { ApiError } from '../../http/api-error.js';
import { ADMIN_ERRORS } from '../../http/admin-errors.js';
import { workspaceQuotaError } from '../../http/refusal-error.js';
import { ADMIN_JSON, type AdminRoute } from '../../http/route-table.js';
import { adminScopeOf, type AdminScope } from '../../http/session/console-scope.js';
import { parse } from '../../http/validation.js';
import {
  createWorkspaceToken,
  expiresIn,
  listWorkspaceTokens,
  revokeWorkspaceToken,
  type WorkspaceDeps,
} from '../workspaces/index.js';
import { createToken, listTokens, revokeToken, tokenView, type TokenStores } from './tokens.js';

export type TokenAdminName = 'listTokens' | 'createToken' | 'revokeToken';

/**
 * The tokens: API tokens listed, created (the value shown once) and revoked; admin tokens (made by
 * the token CLI only) listed and revoked. A workspace's console (docs/workspaces.md "The console")
 * lists its workspace's API tokens only, and its admin creates tokens within it (for its devices,
 * its pools, or workspace tokens) and revokes its tokens; another's token, or an admin token, is
 * 404 as an id nobody has.
 */
export const tokenAdminRoutes: AdminRoute<TokenAdminName>[] = [
  { surface: 'admin', method: 'get', path: '/tokens', handler: 'listTokens', console: 'read' },
  {
    surface: 'admin',
    method: 'post',
    path: '/tokens',
    body: ADMIN_JSON,
    handler: 'createToken',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'delete',
    path: '/tokens/:id',
    body: 'none',
    handler: 'revokeToken',
    console: 'admin',
  },
];

/** The handlers of the rows, over both token stores (and the pools a new token may name). */
export function tokenAdminHandlers(
  s: Uses<'tokens' | 'redis' | 'workspaces' | 'sessions' | 'workspaceCache'>,
): Record<TokenAdminName, RequestHandler> {
  const stores: TokenStores = { api: s.tokens, admin: new TokenStore(s.redis, ADMIN_TOKENS) };
  const workspace: WorkspaceDeps = { ...s, pools: { workspaceOf: (id) => s.workspaceCache.poolOwner(id) } };
  return {
    listTokens: listTokensRoute(stores, workspace),
    createToken: createTokenRoute(s.tokens, new PoolStore(s.redis), workspace, s.workspaceCache),
    revokeToken: revokeTokenRoute(stores, workspace),
  };
}

/**
 * The rules of the token CLI: a name, an optional device id or pool id (slugs; not both: a token
 * acts on one device or sends through one pool), an optional `<n>s|m|h|d`.
 */
export const createTokenSchema = Joi.object<{
  name: string;
  deviceId?: string;
  poolId?: string;
  expiresIn?: string;
}>({
  name: Joi.string().trim().min(1).max(100).displayName().required(),
  deviceId: Joi.string().pattern(DEVICE_ID_PATTERN).allow('').messages({
    'string.pattern.base':
      '"deviceId" must be a device id: 1-32 characters of a-z, 0-9, _ or -, starting with a letter or digit',
  }),
  poolId: Joi.string()
    .pattern(POOL_ID_PATTERN)
    .allow('')
    // An empty deviceId is none (the dashboard's form sends both fields).
    .when('deviceId', { is: Joi.string().min(1).required(), then: Joi.valid('') })
    .messages({
      'string.pattern.base':
        '"poolId" must be a pool id: 1-32 characters of a-z, 0-9, _ or -, starting with a letter or digit',
      'any.only': '"poolId" cannot be given with "deviceId": a token acts on one device or one pool',
    }),
  // The rule of every route that mints a token (its bound too); '' is none (the dashboard's form).
  expiresIn: expiresIn().allow(''),
});

/** GET /tokens: both kinds (tokens.ts: listTokens), each with its `kind`; a console's: its workspace's. */
function listTokensRoute(stores: TokenStores, workspace: WorkspaceDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const scope = adminScopeOf(res);
    const tokens = scope ? await listWorkspaceTokens(workspace, scope.workspace) : await listTokens(stores);
    res.status(200).json({ success: true, tokens });
  };
}

/**
 * POST /tokens: the value is in this answer and nowhere else, ever (Redis keeps its SHA-256).
 * A `poolId` naming no pool is a 400 `Pool not found` naming `poolId`.
 */
function createTokenRoute(
  tokens: TokenStore,
  pools: PoolStore,
  workspace: WorkspaceDeps,
  devices: { ownerOf(deviceId: string): Promise<string> },
): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const body = parse(createTokenSchema, req.body ?? {});
    const scope = adminScopeOf(res);
    const created = scope
      ? await createScoped(workspace, scope, body)
      : await createToken(tokens, pools, body, devices, workspace.workspaces.ceilings.tokens);
    if (created === 'pool_not_found') {
      throw new ApiError(400, ADMIN_ERRORS.poolNotFound, [
        { path: ['poolId'], message: `poolId names no pool: create the pool first` },
      ]);
    }
    if (created === 'device_not_found') {
      throw new ApiError(400, ADMIN_ERRORS.deviceNotFound, [
        { path: ['deviceId'], message: 'deviceId names no device of this workspace' },
      ]);
    }
    if (created === 'limit') throw workspaceQuotaError('tokens', workspace.workspaces.ceilings.tokens);
    const { value, token } = created;
    req.log.info('admin created a token', {
      tokenId: token.id,
      deviceId: token.deviceId,
      poolId: token.poolId,
      workspaceId: token.workspaceId,
    });
    res.setHeader('Cache-Control', 'no-store');
    res.status(201).json({ success: true, token: tokenView(token), value });
  };
}

/**
 * A console's token: within its workspace (a device or pool of it, or a workspace token), counted
 * against its token limit. The form's empty fields are none.
 */
function createScoped(
  workspace: WorkspaceDeps,
  scope: AdminScope,
  body: { name: string; deviceId?: string; poolId?: string; expiresIn?: string },
) {
  return createWorkspaceToken(workspace, scope.workspace, {
    name: body.name,
    ...(body.deviceId ? { deviceId: body.deviceId } : {}),
    ...(body.poolId ? { poolId: body.poolId } : {}),
    ...(body.expiresIn ? { expiresIn: body.expiresIn } : {}),
  });
}

/**
 * DELETE /tokens/:id, an API or an admin token by its id's prefix (tokens.ts: revokeToken); a
 * console's: an API token of its workspace (any other id, an admin token's too, is 404).
 */
function revokeTokenRoute(stores: TokenStores, workspace: WorkspaceDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const id = String(req.params.id ?? '');
    const scope = adminScopeOf(res);
    const revoked = scope
      ? id.length <= 64 && (await revokeWorkspaceToken(workspace, scope.workspace, id)) === 'revoked'
        ? { kind: 'api' as const }
        : 'not_found'
      : await revokeToken(stores, id);
    if (revoked === 'not_found') throw new ApiError(404, ADMIN_ERRORS.tokenNotFound);
    req.log.info('admin revoked a token', { tokenId: id, kind: revoked.kind, workspaceId: scope?.workspace });
    res.status(200).json({ success: true });
  };
}
