import type { Logger, RedisClient } from '@mgw/common';
import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import { Joi } from '@mgw/contracts';
import { ADMIN_TOKENS, TokenStore } from '@mgw/store';
import { ApiError } from '../api-error.js';
import type { AdminConfig } from '../../config.js';
import { parse } from '../validation.js';
import { ADMIN_ERRORS } from '../admin-errors.js';
import { AdminSessions, sameSecret, type AdminSession } from './admin-session.js';
import { checkAdminToken, signIn, type SignInDeps, type TokenCaller } from './sign-in.js';

/**
 * Who called the admin API: a signed-in dashboard session, or automation — `ADMIN_API_TOKEN`, or an
 * admin token made by the token CLI (`tokenId` names it).
 */
export type AdminCaller = { via: 'session'; sessionId: string; session: AdminSession } | TokenCaller;

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

/** The client a sign-in budget belongs to: its IP (an IPv6 client by its subnet). */
const clientOf = (req: Request): string => ipKeyGenerator(req.ip ?? 'unknown');

const tooManySignIns = (resetIn: number) =>
  new ApiError(429, ADMIN_ERRORS.tooManySignIns, undefined, { resetIn });

const signInSchema = Joi.object<{ password: string }>({ password: Joi.string().min(1).max(1024).required() });

export interface AdminAuthDeps {
  redis: RedisClient;
  config: AdminConfig;
  /** Where a failed `lastUsedAt` write of an admin token is logged. */
  logger: Logger;
}

/**
 * Sign-in, sign-out and the guard of every other admin route (sign-in.ts decides; this maps its
 * outcomes to statuses, cookies and logs). The password and the automation token are compared in
 * constant time. A client IP that failed `signInLimit` times in the window gets 429 — without its
 * password being checked — until the window ends, so guessing stops there.
 */
export class AdminAuth {
  readonly sessions: AdminSessions;
  private readonly signIns: SignInDeps;

  constructor(private readonly deps: AdminAuthDeps) {
    this.sessions = new AdminSessions(deps.redis, deps.config.sessionTtlSeconds);
    this.signIns = { ...deps, sessions: this.sessions, tokens: new TokenStore(deps.redis, ADMIN_TOKENS) };
  }

  /** A bearer token (sign-in.ts: checkAdminToken): 429 past the client's budget, 401 when wrong. */
  private async bearer(req: Request, header: string): Promise<AdminCaller> {
    const token = BEARER.exec(header)?.[1];
    const checked = await checkAdminToken(this.signIns, clientOf(req), token);
    if (checked.kind === 'refused' && checked.reason === 'too_many_attempts')
      throw tooManySignIns(checked.resetIn);
    if (checked.kind === 'refused') {
      req.log.warn('admin API refused: wrong bearer token');
      throw new ApiError(401, ADMIN_ERRORS.unauthenticated);
    }
    const { caller } = checked;
    // The audit trail of automation: which admin token changed something (never its value).
    if (!SAFE_METHODS.has(req.method)) {
      req.log.info('admin API change by token', {
        adminTokenId: caller.tokenId ?? 'ADMIN_API_TOKEN',
        method: req.method,
      });
    }
    return caller;
  }

  /** POST /session: `{ password }` -> the session cookie and the CSRF token. */
  signIn(): RequestHandler {
    const { config } = this.deps;
    return async (req, res) => {
      // Before the body is read: without a password there is no sign-in to check it for.
      if (!config.password) throw new ApiError(404, ADMIN_ERRORS.signInDisabled);
      const { password } = parse(signInSchema, req.body ?? {});
      const outcome = await signIn(this.signIns, clientOf(req), password);
      if (outcome.kind === 'refused') {
        if (outcome.reason === 'disabled') throw new ApiError(404, ADMIN_ERRORS.signInDisabled);
        if (outcome.reason === 'too_many_attempts') throw tooManySignIns(outcome.resetIn);
        req.log.warn('admin sign-in refused: wrong password');
        throw new ApiError(401, ADMIN_ERRORS.wrongPassword);
      }
      const { id, session } = outcome;
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
            : { success: true, via: 'token', ...(caller.tokenId ? { tokenId: caller.tokenId } : {}) },
        );
    };
  }

  /** 401 unless a session cookie or an admin bearer token is presented; 403 for a change without CSRF. */
  require(): RequestHandler {
    const { config } = this.deps;
    return async (req, res, next) => {
      try {
        const header = req.get('authorization');
        if (header) {
          res.locals.admin = await this.bearer(req, header);
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
