import type { RedisClient } from '@mgw/common';
import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import { ApiError } from './api-error.js';
import { type ApiConfig } from '../config.js';
import { ERRORS, type Metrics } from '@mgw/contracts';
import { recordAuthFailure, type TokenStore } from '@mgw/store';

/** Who is calling: set by `authenticate` on `res.locals.auth`. */
export interface AuthContext {
  tokenId: string;
  /** SHA-256 of the token: the key of per-token rate limits and idempotency records. */
  tokenHash: string;
  /**
   * The device this request acts on: the token's own, or the default device. For a pool token,
   * `pool:<poolId>` (no device is so named): it only names the slot of the token's rate-limit count.
   */
  deviceId: string;
  /** A token linked to a pool: its sends are spread over the pool's devices (features/pools/pool-send.ts). */
  poolId?: string;
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

function poolMay(req: Request): boolean {
  // Every route this guards is under the API's base (/api/messenger/v1).
  const path = req.path.replace(/^\/api\/messenger\/v1/, '').replace(/\/$/, '');
  return POOL_ROUTES.some((r) => r.test(`${req.method} ${path}`));
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
export function authenticate({ redis, tokens, config, metrics }: AuthDeps): RequestHandler {
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
        const { poolId } = check.token;
        if (poolId && !poolMay(req)) return next(new ApiError(403, ERRORS.poolTokenNotAllowed));
        tokens.noteUse(check.tokenHash);
        res.locals.auth = {
          tokenId: check.token.id,
          tokenHash: check.tokenHash,
          deviceId: poolId ? `pool:${poolId}` : (check.token.deviceId ?? config.defaultDeviceId),
          ...(poolId ? { poolId } : {}),
        } satisfies AuthContext;
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
