import type { RedisClient } from '@mgw/common';
import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import { ApiError } from './api-error.js';
import { type ApiConfig } from '../config.js';
import { DEFAULT_WORKSPACE, ERRORS, type Metrics } from '@mgw/contracts';
import { recordAuthFailure, type TokenRecord, type TokenStore } from '@mgw/store';
import { namedDeviceOf } from './device-path.js';
import type { WorkspaceCache } from './workspace-cache.js';

/** Who is calling: set by `authenticate` on `res.locals.auth`. */
export interface AuthContext {
  tokenId: string;
  /** SHA-256 of the token: the key of per-token rate limits and idempotency records. */
  tokenHash: string;
  /**
   * The device this request acts on: the token's own, the one its path names (a workspace token),
   * or the default device. For a pool token, `pool:<poolId>`, and for a workspace token acting on
   * its workspace, `workspace:<id>` (no device is so named): only the slot of its rate-limit count.
   */
  deviceId: string;
  /** A token linked to a pool: its sends are spread over the pool's devices (features/pools/pool-send.ts). */
  poolId?: string;
  /** The workspace the token belongs to (docs/workspaces.md); `default` for every token before them. */
  workspaceId: string;
  /** A workspace token: it acts on any device of its workspace, and on the workspace itself. */
  workspaceToken?: true;
}

/**
 * What a pool token may do: send, and read and control what it sent. Everything else acts on one
 * device (linking, groups, the webhook, contact checks, OTP, media) and wants a device token.
 */
const POOL_ROUTES: readonly RegExp[] = [
  /^POST \/send$/,
  /^(GET|HEAD) \/messages\/[^/]+$/,
  /^(GET|HEAD) \/batches(\/[^/]+)?$/,
  /^POST \/batches\/[^/]+\/(pause|resume|cancel)$/,
  // Each MCP tool call goes through its route, where these same rules apply again.
  /^POST \/mcp$/,
];

/**
 * What acts on a workspace rather than on one of its devices (features/workspaces): a workspace
 * token calls these without naming a device; device and pool tokens may not call them.
 */
const WORKSPACE_ROUTES: readonly RegExp[] = [
  /^(GET|HEAD|POST) \/devices$/,
  /^(GET|HEAD|DELETE) \/devices\/[^/]+$/,
  /^(GET|HEAD|POST) \/tokens$/,
  /^DELETE \/tokens\/[^/]+$/,
  /^(GET|HEAD) \/workspace(\/usage)?$/,
];

/** The request as the route lists above spell it: `POST /send` (the API's base taken off). */
const routeOf = (req: Request): string =>
  `${req.method} ${req.path.replace(/^\/api\/messenger\/v1/, '').replace(/\/$/, '')}`;

function poolMay(req: Request): boolean {
  const route = routeOf(req);
  return POOL_ROUTES.some((r) => r.test(route));
}

/** Every path of WORKSPACE_ROUTES names one of these: any other path is none of them, unparsed. */
const WORKSPACE_PATH = /\/(?:devices|tokens|workspace)(?:\/|$)/;

/** Whether a request acts on the workspace itself (WORKSPACE_ROUTES). */
export function isWorkspaceRoute(req: Request): boolean {
  // The common case (`POST /send` and every other device route) without building the route.
  if (!WORKSPACE_PATH.test(req.path)) return false;
  const route = routeOf(req);
  return WORKSPACE_ROUTES.some((r) => r.test(route));
}

export function authOf(res: Response): AuthContext {
  const auth = res.locals.auth as AuthContext | undefined;
  if (!auth) throw new Error('authenticate() must run before this handler');
  return auth;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The token from `Authorization: Bearer` (preferred) or `?token=`. */
function tokenFrom(req: Request): string | undefined {
  const header = req.get('authorization');
  if (header) return BEARER.exec(header)?.[1];
  const q = (req.query as Record<string, unknown>).token;
  return typeof q === 'string' && q.length > 0 ? q : undefined;
}

export interface AuthDeps {
  redis: RedisClient;
  /**
   * Verifies a presented token (the cache in front of the token store) and records its use
   * (throttled, in the background: token-cache.ts).
   */
  tokens: Pick<TokenStore, 'verify'> & { noteUse(tokenHash: string): void };
  /** The workspaces' records (cached: workspace-cache.ts), who owns a device and whose a pool is. */
  workspaces: Pick<WorkspaceCache, 'get' | 'ownerOf' | 'poolOwner'>;
  config: Pick<ApiConfig, 'defaultDeviceId' | 'authFailureLimit' | 'authFailureWindowMs'>;
  metrics: Metrics;
}

/**
 * Authenticates every request before anything else happens to it. The token is checked first:
 * a valid token is always served, even from an IP over the failure limit (clients behind one NAT
 * or proxy must not lock each other out, and tokens are far too long to guess). Only a request
 * that presents a wrong token (unknown, revoked, expired) counts as a failure of its IP; past
 * `authFailureLimit` in the window, wrong tokens from that IP get 429 instead of 401. No token
 * at all is a plain 401 that counts nothing (CORS preflights, health checkers, curious browsers),
 * and so is any OPTIONS request. Wrong-token answers carry the X-RateLimit-* headers of the guard.
 */
export function authenticate({ redis, tokens, workspaces, config, metrics }: AuthDeps): RequestHandler {
  const limit = config.authFailureLimit;
  const setHeaders = (res: Response, failures: number, ttlMs: number) => {
    res.setHeader('X-RateLimit-Limit', String(limit));
    res.setHeader('X-RateLimit-Remaining', String(Math.max(limit - failures, 0)));
    res.setHeader('X-RateLimit-Reset', String(Math.ceil((Date.now() + Math.max(ttlMs, 0)) / 1000)));
  };

  return async (req, res, next) => {
    try {
      const value = tokenFrom(req);
      const check = value ? await tokens.verify(value) : undefined;
      if (check?.ok) {
        const auth = await authorize(check.token, check.tokenHash, req, res, { workspaces, config });
        if (auth instanceof ApiError) return next(auth);
        tokens.noteUse(check.tokenHash);
        res.locals.auth = auth;
        return next();
      }
      if (!check || req.method === 'OPTIONS') {
        metrics.authRejections.inc({ reason: check ? check.reason : 'missing' });
        return next(new ApiError(401, ERRORS.invalidToken));
      }

      const { failures, ttlMs, blocked } = await recordAuthFailure(
        redis,
        ipKeyGenerator(req.ip ?? 'unknown'),
        config.authFailureWindowMs,
        limit,
      );
      setHeaders(res, failures, ttlMs);
      if (blocked) {
        metrics.authRejections.inc({ reason: 'blocked' });
        return next(
          new ApiError(429, ERRORS.tooManyAuthFailures, undefined, {
            resetIn: Math.max(1, Math.ceil(ttlMs / 1000)),
          }),
        );
      }
      metrics.authRejections.inc({ reason: check.reason });
      next(new ApiError(401, ERRORS.invalidToken));
    } catch (err) {
      next(err);
    }
  };
}

/**
 * What a verified token may do with this request, and on which device (docs/workspaces.md):
 * - its workspace must exist and be active (403 when suspended);
 * - a device token acts on its device; a pool token sends through its pool (POOL_ROUTES) when the
 *   pool is its workspace's (a token left on a deleted pool whose id another workspace took since
 *   is no token of that pool: 401);
 * - a workspace token acts on the device its path names (`/devices/{id}/…`, device-path.ts) when
 *   its workspace owns it, or on the workspace (WORKSPACE_ROUTES); `default`'s acts on
 *   DEFAULT_DEVICE_ID when it names none, as a token without a device link did before workspaces;
 * - a token from before workspaces without a device link (no `workspaceId`) keeps that reach: the
 *   default device only, so an upgrade widens no token's reach.
 * A named device the token may not act on is a 404 whoever owns it.
 */
async function authorize(
  token: TokenRecord,
  tokenHash: string,
  req: Request,
  res: Response,
  { workspaces, config }: Pick<AuthDeps, 'workspaces' | 'config'>,
): Promise<AuthContext | ApiError> {
  const workspaceId = token.workspaceId ?? DEFAULT_WORKSPACE;
  const workspace = await workspaces.get(workspaceId);
  // A workspace deleted under its tokens: they are no longer anyone's.
  if (!workspace && workspaceId !== DEFAULT_WORKSPACE) return new ApiError(401, ERRORS.invalidToken);
  if (workspace?.status === 'suspended') return new ApiError(403, ERRORS.workspaceSuspended);
  const base = { tokenId: token.id, tokenHash, workspaceId };
  const named = namedDeviceOf(res);
  const { poolId, deviceId } = token;
  if (poolId) {
    // Gone, or another workspace's: a token left on a deleted pool is no token of a pool. Not only
    // another's: the gone this process cached may already be another's pool it has not heard of.
    const poolOwner = await workspaces.poolOwner(poolId);
    if (poolOwner !== workspaceId) return new ApiError(401, ERRORS.invalidToken);
    if (named) return new ApiError(404, ERRORS.deviceNotFound);
    if (!poolMay(req)) return new ApiError(403, ERRORS.poolTokenNotAllowed);
    return { ...base, deviceId: `pool:${poolId}`, poolId };
  }
  if (deviceId) {
    if (named && named !== deviceId) return new ApiError(404, ERRORS.deviceNotFound);
    if (isWorkspaceRoute(req)) return new ApiError(403, ERRORS.workspaceTokenRequired);
    return { ...base, deviceId };
  }
  if (!token.workspaceId) {
    // From before workspaces: the default device, as then.
    if (named && named !== config.defaultDeviceId) return new ApiError(404, ERRORS.deviceNotFound);
    if (isWorkspaceRoute(req)) return new ApiError(403, ERRORS.workspaceTokenRequired);
    return { ...base, deviceId: config.defaultDeviceId };
  }
  const workspaceAuth = { ...base, workspaceToken: true as const };
  if (named) {
    if ((await workspaces.ownerOf(named)) !== workspaceId) return new ApiError(404, ERRORS.deviceNotFound);
    return { ...workspaceAuth, deviceId: named };
  }
  if (workspaceId === DEFAULT_WORKSPACE) return { ...workspaceAuth, deviceId: config.defaultDeviceId };
  if (isWorkspaceRoute(req)) return { ...workspaceAuth, deviceId: `workspace:${workspaceId}` };
  return new ApiError(400, ERRORS.deviceNotNamed);
}
