import type { RedisClient } from '@mgw/common';
import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import { ApiError } from './api-error.js';
import { type ApiConfig } from '../config.js';
import { DEFAULT_WORKSPACE, ERRORS, type Metrics } from '@mgw/contracts';
import { recordAuthFailure, type TokenRecord, type TokenStore } from '@mgw/store';
import { DEVICE_ID_PATTERN } from '@mgw/contracts';
import { namedDeviceOf } from './device-path.js';
import type { ApiRoute } from './route-table.js';
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

/** What the guard knows of the route a request matched: its row's scope and whether a pool token may call it. */
export type RouteScope = Pick<ApiRoute, 'scope' | 'pool'>;

/**
 * The public API's guard, one per app. Authorization is decided from the route row the router
 * matched — its `scope` and `pool`, given when the app mounts the route — never from a second
 * reading of the request's path: whatever spelling reached a route, the route's own rules apply
 * (docs/security.md "One reading of a path").
 */
export interface ApiGuard {
  /** The guard in front of one route. */
  route(row: RouteScope): RequestHandler;
  /**
   * A path no route serves, or a method its route does not: the credentials alone (a valid token of
   * an active workspace), so a 404 or a 405 is never answered before a 401.
   */
  credentials: RequestHandler;
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
export function authenticate({ redis, tokens, workspaces, config, metrics }: AuthDeps): ApiGuard {
  const limit = config.authFailureLimit;
  const setHeaders = (res: Response, failures: number, ttlMs: number) => {
    res.setHeader('X-RateLimit-Limit', String(limit));
    res.setHeader('X-RateLimit-Remaining', String(Math.max(limit - failures, 0)));
    res.setHeader('X-RateLimit-Reset', String(Math.ceil((Date.now() + Math.max(ttlMs, 0)) / 1000)));
  };

  const guard =
    (row: RouteScope | undefined): RequestHandler =>
    async (req, res, next) => {
      try {
        const value = tokenFrom(req);
        const check = value ? await tokens.verify(value) : undefined;
        if (check?.ok) {
          const auth = await authorize(check.token, check.tokenHash, row, res, { workspaces, config });
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
  // Routes of one scope share their guard (the rows are few shapes: device, workspace, pool).
  const byShape = new Map<string, RequestHandler>();
  return {
    route(row) {
      const shape = `${row.scope ?? 'device'}:${row.pool === true}`;
      let handler = byShape.get(shape);
      if (!handler) byShape.set(shape, (handler = guard({ scope: row.scope ?? 'device', pool: row.pool })));
      return handler;
    },
    credentials: guard(undefined),
  };
}

/**
 * What a verified token may do with this request, and on which device (docs/workspaces.md):
 * - its workspace must exist and be active (403 when suspended);
 * - a device token acts on its device; a pool token sends through its pool (rows with `pool`) when
 *   the pool is its workspace's (a token left on a deleted pool whose id another workspace took since
 *   is no token of that pool: 401);
 * - a workspace token acts on the device its path names (`/devices/{id}/…`, device-path.ts) when
 *   its workspace owns it, or on the workspace (rows of scope `workspace`); `default`'s acts on
 *   DEFAULT_DEVICE_ID when it names none, as a token without a device link did before workspaces;
 * - a token from before workspaces without a device link (no `workspaceId`) keeps that reach: the
 *   default device only, so an upgrade widens no token's reach.
 * A named device the token may not act on is a 404 whoever owns it, and so is an id no device could
 * have. Without a row (a path no route serves), only the token and its workspace are checked.
 */
async function authorize(
  token: TokenRecord,
  tokenHash: string,
  row: RouteScope | undefined,
  res: Response,
  { workspaces, config }: Pick<AuthDeps, 'workspaces' | 'config'>,
): Promise<AuthContext | ApiError> {
  const workspaceId = token.workspaceId ?? DEFAULT_WORKSPACE;
  const workspace = await workspaces.get(workspaceId);
  // A workspace deleted under its tokens: they are no longer anyone's.
  if (!workspace && workspaceId !== DEFAULT_WORKSPACE) return new ApiError(401, ERRORS.invalidToken);
  if (workspace?.status === 'suspended') return new ApiError(403, ERRORS.workspaceSuspended);
  const base = { tokenId: token.id, tokenHash, workspaceId };
  const { poolId, deviceId } = token;
  if (poolId) {
    // Gone, or another workspace's: a token left on a deleted pool is no token of a pool. Not only
    // another's: the gone this process cached may already be another's pool it has not heard of.
    const poolOwner = await workspaces.poolOwner(poolId);
    if (poolOwner !== workspaceId) return new ApiError(401, ERRORS.invalidToken);
  }
  // A path no route serves: the credentials were all there was to check.
  if (!row) return { ...base, deviceId: deviceId ?? (poolId ? `pool:${poolId}` : config.defaultDeviceId) };
  const named = namedDeviceOf(res);
  if (named !== undefined && !DEVICE_ID_PATTERN.test(named)) return new ApiError(404, ERRORS.deviceNotFound);
  const onWorkspace = row.scope === 'workspace';
  if (poolId) {
    if (named) return new ApiError(404, ERRORS.deviceNotFound);
    if (!row.pool || onWorkspace) return new ApiError(403, ERRORS.poolTokenNotAllowed);
    return { ...base, deviceId: `pool:${poolId}`, poolId };
  }
  if (deviceId) {
    if (named && named !== deviceId) return new ApiError(404, ERRORS.deviceNotFound);
    if (onWorkspace) return new ApiError(403, ERRORS.workspaceTokenRequired);
    return { ...base, deviceId };
  }
  if (!token.workspaceId) {
    // From before workspaces: the default device, as then.
    if (named && named !== config.defaultDeviceId) return new ApiError(404, ERRORS.deviceNotFound);
    if (onWorkspace) return new ApiError(403, ERRORS.workspaceTokenRequired);
    return { ...base, deviceId: config.defaultDeviceId };
  }
  const workspaceAuth = { ...base, workspaceToken: true as const };
  if (named) {
    if ((await workspaces.ownerOf(named)) !== workspaceId) return new ApiError(404, ERRORS.deviceNotFound);
    return { ...workspaceAuth, deviceId: named };
  }
  if (workspaceId === DEFAULT_WORKSPACE) return { ...workspaceAuth, deviceId: config.defaultDeviceId };
  if (onWorkspace) return { ...workspaceAuth, deviceId: `workspace:${workspaceId}` };
  return new ApiError(400, ERRORS.deviceNotNamed);
}
