import type { RedisClient } from '@mgw/common';
import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import Joi from 'joi';
import { keys } from '@mgw/contracts';
import { ApiError } from '../http/api-error.js';
import type { AdminConfig } from '../config.js';
import { parse } from '../http/validation.js';
import { ADMIN_ERRORS } from './admin-errors.js';
import { AdminSessions, sameSecret, type AdminSession } from './admin-session.js';

/** Who called the admin API: a signed-in dashboard session, or the automation token. */
export type AdminCaller = { via: 'session'; sessionId: string; session: AdminSession } | { via: 'token' };

export function adminOf(res: Response): AdminCaller {
  const caller = res.locals.admin as AdminCaller | undefined;
  if (!caller) throw new Error('requireAdmin() must run before this handler');
  return caller;
}

/** `__Host-` cookies must be Secure: over plain HTTP (npm start on localhost) the plain name is used. */
const COOKIE_SECURE = '__Host-mgw_admin';
const COOKIE_PLAIN = 'mgw_admin';
const CSRF_HEADER = 'x-csrf-token';
const BEARER = /^Bearer\s+(\S+)\s*$/i;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function sessionCookie(req: Request): string | undefined {
  return req.secure ? readCookie(req, COOKIE_SECURE) : readCookie(req, COOKIE_PLAIN);
}

function setSessionCookie(req: Request, res: Response, value: string, maxAgeSeconds: number): void {
  // Secure whenever the client reached us over TLS (directly, or at a proxy trusted by TRUST_PROXY).
  const attrs = ['Path=/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${maxAgeSeconds}`];
  if (req.secure) attrs.push('Secure');
  res.append('Set-Cookie', `${req.secure ? COOKIE_SECURE : COOKIE_PLAIN}=${value}; ${attrs.join('; ')}`);
}

/**
 * Reserves one sign-in attempt of a client IP in a fixed window that starts at its first attempt:
 * refused (1) when `limit` attempts are already counted, so parallel guesses cannot outrun the
 * count. A successful sign-in gives its attempt back. Returns [blocked, window left in ms].
 */
const RESERVE_ATTEMPT = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
local ttl = redis.call('PTTL', KEYS[1])
if n >= tonumber(ARGV[2]) and ttl > 0 then return {1, ttl} end
n = redis.call('INCR', KEYS[1])
if n == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {0, ttl}
`;

// Only a counter that still exists: a DECR after the window ended would leave -1 without expiry.
const GIVE_BACK = `if tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then redis.call('DECR', KEYS[1]) end`;

const signInSchema = Joi.object<{ password: string }>({ password: Joi.string().min(1).max(1024).required() });

export interface AdminAuthDeps {
  redis: RedisClient;
  config: AdminConfig;
}

/**
 * Sign-in, sign-out and the guard of every other admin route. The password and the automation
 * token are compared in constant time. A client IP that failed `signInLimit` times in the window
 * gets 429 — without its password being checked — until the window ends, so guessing stops there.
 */
export class AdminAuth {
  readonly sessions: AdminSessions;

  constructor(private readonly deps: AdminAuthDeps) {
    this.sessions = new AdminSessions(deps.redis, deps.config.sessionTtlSeconds);
  }

  private failureKey(req: Request): string {
    return keys.adminSignInFailures(ipKeyGenerator(req.ip ?? 'unknown'));
  }

  /** POST /session: `{ password }` -> the session cookie and the CSRF token. */
  signIn(): RequestHandler {
    const { config, redis } = this.deps;
    return async (req, res) => {
      if (!config.password) throw new ApiError(404, ADMIN_ERRORS.signInDisabled);
      const { password } = parse(signInSchema, req.body ?? {});
      const failKey = this.failureKey(req);
      const [blocked, ttlMs] = (await redis.eval(
        RESERVE_ATTEMPT,
        1,
        failKey,
        String(config.signInWindowMs),
        String(config.signInLimit),
      )) as [number, number];
      if (blocked) {
        throw new ApiError(429, ADMIN_ERRORS.tooManySignIns, undefined, {
          resetIn: Math.max(1, Math.ceil(ttlMs / 1000)),
        });
      }
      if (!sameSecret(password, config.password)) {
        req.log.warn('admin sign-in refused: wrong password');
        throw new ApiError(401, ADMIN_ERRORS.wrongPassword);
      }
      await redis.eval(GIVE_BACK, 1, failKey);
      const { id, session } = await this.sessions.create();
      setSessionCookie(req, res, id, config.sessionTtlSeconds);
      req.log.info('admin signed in');
      res.status(200).json({ success: true, via: 'session', ...session });
    };
  }

  /** DELETE /session: ends the session (CSRF-checked by `require()` like any other change). */
  signOut(): RequestHandler {
    return async (req, res) => {
      const caller = adminOf(res);
      if (caller.via === 'session') await this.sessions.delete(caller.sessionId);
      setSessionCookie(req, res, '', 0);
      res.status(200).json({ success: true });
    };
  }

  /** GET /session: who is signed in, and the CSRF token the page needs for its changes. */
  whoAmI(): RequestHandler {
    return (_req, res) => {
      const caller = adminOf(res);
      res
        .status(200)
        .json(
          caller.via === 'session'
            ? { success: true, via: 'session', ...caller.session }
            : { success: true, via: 'token' },
        );
    };
  }

  /** 401 unless a session cookie or the admin bearer token is presented; 403 for a change without CSRF. */
  require(): RequestHandler {
    const { config } = this.deps;
    return async (req, res, next) => {
      try {
        const header = req.get('authorization');
        if (header) {
          const token = BEARER.exec(header)?.[1];
          if (!config.apiToken || !token || !sameSecret(token, config.apiToken)) {
            throw new ApiError(401, ADMIN_ERRORS.unauthenticated);
          }
          res.locals.admin = { via: 'token' } satisfies AdminCaller;
          return next();
        }
        const id = config.password ? sessionCookie(req) : undefined;
        const session = id ? await this.sessions.get(id) : undefined;
        if (!id || !session) throw new ApiError(401, ADMIN_ERRORS.unauthenticated);
        if (!SAFE_METHODS.has(req.method)) {
          const csrf = req.get(CSRF_HEADER);
          if (!csrf || !sameSecret(csrf, session.csrfToken)) throw new ApiError(403, ADMIN_ERRORS.csrf);
        }
        res.locals.admin = { via: 'session', sessionId: id, session } satisfies AdminCaller;
        next();
      } catch (err) {
        next(err);
      }
    };
  }

  /** Whether the request carries a live dashboard session (the pages use it to pick sign-in or app). */
  async hasSession(req: Request): Promise<boolean> {
    const id = this.deps.config.password ? sessionCookie(req) : undefined;
    return id ? (await this.sessions.get(id)) !== undefined : false;
  }
}
