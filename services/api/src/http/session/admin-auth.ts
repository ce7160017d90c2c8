import type { Logger, RedisClient } from '@mgw/common';
import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import { ERRORS, Joi, WORKSPACE_ID_PATTERN } from '@mgw/contracts';
import { ADMIN_TOKENS, ConsoleUserStore, TokenStore } from '@mgw/store';
import { ApiError } from '../api-error.js';
import type { AdminConfig } from '../../config.js';
import { parse } from '../validation.js';
import { ADMIN_ERRORS } from '../admin-errors.js';
import type { WorkspaceCache } from '../workspace-cache.js';
import { AdminSessions, sameSecret, type AdminSession } from './admin-session.js';
import { consoleGuard, scopeOfSession, type ConsoleAccess } from './console-scope.js';
import { PasswordHasher } from './password-hash.js';
import { checkAdminToken, signIn, signInUser, type SignInDeps, type TokenCaller } from './sign-in.js';

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

/**
 * `{ password }`: the operator; `{ user, password }`: a console user (the name as typed: trimmed
 * and lowercased, as names are kept). A password is at most 1,024 characters, which JSON may send
 * as up to 4,096 UTF-16 units; a longer one matches nothing.
 */
export const signInSchema = Joi.object<{ user?: string; password: string }>({
  user: Joi.string().trim().lowercase().min(1).max(64),
  password: Joi.string().min(1).max(4096).required(),
});

export const viewSchema = Joi.object<{ workspaceId: string }>({
  workspaceId: Joi.string().pattern(WORKSPACE_ID_PATTERN).required().messages({
    'string.pattern.base':
      '"workspaceId" must be a workspace id: 1-32 characters of a-z, 0-9, _ or -, starting with a letter or digit',
  }),
});

export interface AdminAuthDeps {
  redis: RedisClient;
  config: AdminConfig;
  /** Where a failed `lastUsedAt` write of an admin token is logged. */
  logger: Logger;
  /** The workspaces' records, who owns a device and a pool (the console's scope). */
  workspaces: Pick<WorkspaceCache, 'get' | 'ownerOf' | 'poolOwner'>;
}

/**
 * Sign-in, sign-out and the guard of every other admin route (sign-in.ts decides; this maps its
 * outcomes to statuses, cookies and logs). The password and the automation token are compared in
 * constant time; a console user's password through the KDF (password-hash.ts). A client IP that
 * failed `signInLimit` times in the window gets 429 — without its password being checked — until
 * the window ends, so guessing stops there.
 */
export class AdminAuth {
  readonly sessions: AdminSessions;
  /** The console's users (docs/workspaces.md "The console"), and their passwords' bounded KDF. */
  readonly users: ConsoleUserStore;
  readonly passwords = new PasswordHasher();
  private readonly signIns: SignInDeps;

  constructor(private readonly deps: AdminAuthDeps) {
    this.users = new ConsoleUserStore(deps.redis);
    this.sessions = new AdminSessions(deps.redis, deps.config.sessionTtlSeconds, this.users);
    this.signIns = {
      ...deps,
      sessions: this.sessions,
      tokens: new TokenStore(deps.redis, ADMIN_TOKENS),
      users: this.users,
      passwords: this.passwords,
    };
  }

  /** The console's guard of one admin route (console-scope.ts), run after `require()`. */
  scope(access: ConsoleAccess | undefined): RequestHandler {
    return consoleGuard(access, this.deps);
  }

  /** What GET /session (and a sign-in, and opening a workspace) answers about a session. */
  private async sessionView(session: AdminSession): Promise<Record<string, unknown>> {
    const { csrfToken, createdAt, expiresAt } = session;
    const base = { success: true, via: 'session', csrfToken, createdAt, expiresAt };
    const scope = scopeOfSession(session);
    if (!scope) return { ...base, role: 'operator' };
    const workspace = {
      id: scope.workspace,
      name: (await this.deps.workspaces.get(scope.workspace))?.name ?? scope.workspace,
    };
    return {
      ...base,
      role: scope.role,
      workspace,
      ...(scope.user ? { user: scope.user } : {}),
      ...(scope.viewing ? { viewing: true } : {}),
    };
  }

  /**
   * A session that is still what it says it is: the operator's while ADMIN_PASSWORD is set; a
   * console user's while its record is there, of the same workspace and role, and unchanged since
   * the sign-in (its stamp) — otherwise it is deleted. One read of the user's record per request.
   */
  private async liveSession(id: string): Promise<AdminSession | undefined> {
    const session = await this.sessions.get(id);
    if (!session) return undefined;
    if (session.role === 'operator') return this.deps.config.password ? session : undefined;
    const user = await this.users.get(session.user);
    if (user?.workspace === session.workspace && user.role === session.role && user.stamp === session.stamp)
      return session;
    await this.sessions.delete(id);
    return undefined;
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

  /**
   * POST /session: `{ password }` (the operator) or `{ user, password }` (a console user) -> the
   * session cookie, and who it is with its CSRF token. The operator's sign-in is there only with
   * ADMIN_PASSWORD set; a console user's whenever the admin API is on.
   */
  signIn(): RequestHandler {
    const { config } = this.deps;
    return async (req, res) => {
      const raw: unknown = req.body ?? {};
      const forUser = typeof raw === 'object' && raw !== null && 'user' in raw;
      // Before the body is checked: without a password there is no operator sign-in to check it for.
      if (!forUser && !config.password) throw new ApiError(404, ADMIN_ERRORS.signInDisabled);
      const { user, password } = parse(signInSchema, raw);
      if (user === undefined) return this.operatorSignIn(req, res, password);
      const outcome = await signInUser(this.signIns, clientOf(req), user, password);
      if (outcome.kind === 'refused') {
        if (outcome.reason === 'too_many_attempts') throw tooManySignIns(outcome.resetIn);
        if (outcome.reason === 'busy') {
          res.setHeader('Retry-After', '1');
          throw new ApiError(503, ADMIN_ERRORS.signInBusy);
        }
        req.log.warn('console sign-in refused: wrong user name or password', { user });
        throw new ApiError(401, ADMIN_ERRORS.wrongUserOrPassword);
      }
      const { id, session } = outcome;
      setSessionCookie(req, res, id, config.sessionTtlSeconds);
      req.log.info('console user signed in', { user, workspaceId: session.workspace, role: session.role });
      res.status(200).json(await this.sessionView(session));
    };
  }

  private async operatorSignIn(req: Request, res: Response, password: string): Promise<void> {
    const { config } = this.deps;
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
    res.status(200).json(await this.sessionView(session));
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

  /**
   * GET /session: who is signed in (`role`; for a console session its `workspace`, `user` or
   * `viewing`), and the CSRF token the page needs for its changes. An admin token is the operator.
   */
  whoAmI(): RequestHandler {
    return async (_req, res) => {
      const caller = adminOf(res);
      res.status(200).json(
        caller.via === 'session'
          ? await this.sessionView(caller.session)
          : {
              success: true,
              via: 'token',
              ...(caller.tokenId ? { tokenId: caller.tokenId } : {}),
              role: 'operator',
            },
      );
    };
  }

  /**
   * PUT /session/workspace `{ workspaceId }`: the operator's session opens a workspace as that
   * workspace sees itself (its admin's view, `viewing: true`); DELETE /session/workspace
   * (`workspaceId` undefined) returns to the operator's view. A console user's session gets 404 as
   * for a path that does not exist; an admin token 403 (a token is always the operator).
   */
  viewWorkspace(leave = false): RequestHandler {
    return async (req, res) => {
      const caller = adminOf(res);
      if (caller.via !== 'session') throw new ApiError(403, ADMIN_ERRORS.viewNeedsSession);
      if (caller.session.role !== 'operator') throw new ApiError(404, ERRORS.notFound);
      const workspaceId = leave ? undefined : parse(viewSchema, req.body ?? {}).workspaceId;
      if (workspaceId && !(await this.deps.workspaces.get(workspaceId)))
        throw new ApiError(404, ADMIN_ERRORS.workspaceNotFound);
      await this.sessions.view(caller.sessionId, caller.session, workspaceId);
      req.log.info(workspaceId ? 'operator opened a workspace' : 'operator left the workspace view', {
        workspaceId: workspaceId ?? caller.session.workspace,
      });
      const { csrfToken, createdAt, expiresAt } = caller.session;
      res.status(200).json(
        await this.sessionView({
          csrfToken,
          createdAt,
          expiresAt,
          role: 'operator',
          ...(workspaceId ? { workspace: workspaceId } : {}),
        }),
      );
    };
  }

  /**
   * 401 unless a session cookie or an admin bearer token is presented; 403 for a change without
   * CSRF. A session's scope (a console user's workspace and role, or the workspace the operator
   * views) is set for the routes' guard and handlers (console-scope.ts: adminScopeOf).
   */
  require(): RequestHandler {
    return async (req, res, next) => {
      try {
        const header = req.get('authorization');
        if (header) {
          res.locals.admin = await this.bearer(req, header);
          return next();
        }
        const id = sessionCookie(req);
        const session = id ? await this.liveSession(id) : undefined;
        if (!id || !session) throw new ApiError(401, ADMIN_ERRORS.unauthenticated);
        if (!SAFE_METHODS.has(req.method)) {
          const csrf = req.get(CSRF_HEADER);
          if (!csrf || !sameSecret(csrf, session.csrfToken)) throw new ApiError(403, ADMIN_ERRORS.csrf);
        }
        res.locals.admin = { via: 'session', sessionId: id, session } satisfies AdminCaller;
        const scope = scopeOfSession(session);
        if (scope) res.locals.adminScope = scope;
        // The audit trail of a workspace's console: who changed something (the user name, never more).
        if (scope && !SAFE_METHODS.has(req.method)) {
          req.log.info('admin API change in a workspace console', {
            workspaceId: scope.workspace,
            ...(scope.user ? { user: scope.user, role: scope.role } : { viewing: true }),
            method: req.method,
          });
        }
        next();
      } catch (err) {
        next(err);
      }
    };
  }

  /** Whether the request carries a live dashboard session (the pages use it to pick sign-in or app). */
  async hasSession(req: Request): Promise<boolean> {
    const id = sessionCookie(req);
    return id ? (await this.liveSession(id)) !== undefined : false;
  }
}
