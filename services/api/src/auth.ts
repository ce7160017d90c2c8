import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import { ApiError } from './api-error.js';
import { type ApiConfig } from './config.js';
import { ERRORS, keys, type Metrics } from '@mgw/contracts';
import type { TokenStore } from '@mgw/store';

/** Who is calling: set by `authenticate` on `res.locals.auth`. */
export interface AuthContext {
  tokenId: string;
  /** SHA-256 of the token: the key of per-token rate limits and idempotency records. */
  tokenHash: string;
  /** The device this request acts on: the token's own, or the default device. */
  deviceId: string;
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

/** Failed attempts per client IP, in a fixed window that starts at the first failure. */
const RECORD_FAILURE = `
local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if n == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}
`;

export interface AuthDeps {
  redis: Redis;
  tokens: TokenStore;
  config: Pick<ApiConfig, 'defaultDeviceId' | 'authFailureLimit' | 'authFailureWindowMs'>;
  metrics: Metrics;
}

/**
 * Authenticates every request before anything else happens to it. A client IP that has failed
 * `authFailureLimit` times in the window is refused with 429 for the rest of the window, even
 * with a valid token: otherwise a guesser would still learn which guesses are right.
 * Auth responses carry the X-RateLimit-* headers of that guard (limit, attempts left, reset).
 */
export function authenticate({ redis, tokens, config, metrics }: AuthDeps): RequestHandler {
  const limit = config.authFailureLimit;
  const setHeaders = (res: Response, failures: number, ttlMs: number) => {
    res.setHeader('X-RateLimit-Limit', String(limit));
    res.setHeader('X-RateLimit-Remaining', String(Math.max(limit - failures, 0)));
    res.setHeader('X-RateLimit-Reset', String(Math.ceil((Date.now() + Math.max(ttlMs, 0)) / 1000)));
  };
  const blocked = (ttlMs: number) => {
    metrics.authRejections.inc({ reason: 'blocked' });
    return new ApiError(429, ERRORS.tooManyAuthFailures, undefined, {
      resetIn: Math.max(1, Math.ceil(ttlMs / 1000)),
    });
  };

  return async (req, res, next) => {
    try {
      const failKey = keys.rateLimitPrefix('auth-failures') + ipKeyGenerator(req.ip ?? 'unknown');
      const [count, ttl] = await redis.multi().get(failKey).pttl(failKey).exec().then(results);
      const failures = Number(count ?? 0);
      if (failures >= limit) {
        setHeaders(res, failures, Number(ttl));
        return next(blocked(Number(ttl)));
      }

      const value = tokenFrom(req);
      const check = value ? await tokens.verify(value) : undefined;
      if (check?.ok) {
        res.locals.auth = {
          tokenId: check.token.id,
          tokenHash: check.tokenHash,
          deviceId: check.token.deviceId ?? config.defaultDeviceId,
        } satisfies AuthContext;
        return next();
      }

      metrics.authRejections.inc({ reason: check ? check.reason : 'missing' });
      const [n, ttlMs] = (await redis.eval(
        RECORD_FAILURE,
        1,
        failKey,
        String(config.authFailureWindowMs),
      )) as [number, number];
      setHeaders(res, n, ttlMs);
      next(new ApiError(401, ERRORS.invalidToken));
    } catch (err) {
      next(err);
    }
  };
}

function results(r: [Error | null, unknown][] | null): unknown[] {
  if (!r) throw new Error('Redis transaction aborted');
  return r.map(([err, value]) => {
    if (err) throw err;
    return value;
  });
}
