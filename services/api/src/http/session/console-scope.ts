import type { RequestHandler, Response } from 'express';
import { DEVICE_ID_PATTERN, ERRORS, POOL_ID_PATTERN } from '@mgw/contracts';
import type { ConsoleRole } from '@mgw/store';
import { ApiError } from '../api-error.js';
import { ADMIN_ERRORS } from '../admin-errors.js';
import type { WorkspaceCache } from '../workspace-cache.js';
import type { AdminSession } from './admin-session.js';

/**
 * What a console session — a workspace's user, or the operator viewing a workspace — may call of
 * an admin route (the row's `console`, docs/workspaces.md "The console"):
 * - absent: the operator only; a console session gets the admin base's 404 `Not found`, exactly
 *   as for a path that does not exist (it learns nothing of the operator's routes);
 * - `read`: both roles (the reads of its workspace);
 * - `chat`: both roles (answering a chat: a reply, a reaction, marking it read);
 * - `admin`: the workspace's admin (an agent gets 403 `Your role cannot do this`);
 * - `session`: everyone signed in (who am I, sign out, open a workspace): the handler decides.
 */
export type ConsoleAccess = 'read' | 'chat' | 'admin' | 'session';

/** The workspace a console session acts in, and as whom; undefined: the operator's whole view. */
export interface AdminScope {
  workspace: string;
  role: ConsoleRole;
  /** A console user's login name (not when the operator views the workspace). */
  user?: string;
  /** The operator viewing the workspace as its admin. */
  viewing?: true;
}

/** The scope of a session: a user's workspace and role, or the workspace an operator views (as its admin). */
export function scopeOfSession(session: AdminSession): AdminScope | undefined {
  if (session.role === 'operator')
    return session.workspace ? { workspace: session.workspace, role: 'admin', viewing: true } : undefined;
  return { workspace: session.workspace, role: session.role, user: session.user };
}

/**
 * The scope of the admin request being served (set by the admin guard, AdminAuth.require):
 * undefined for the operator (a session not viewing a workspace, an admin token). Handlers that
 * list or create filter by it; the route guard below has checked the path's ids already.
 */
export function adminScopeOf(res: Response): AdminScope | undefined {
  return res.locals.adminScope as AdminScope | undefined;
}

export interface ConsoleScopeDeps {
  /** Whose a device or pool is, and a workspace's record (suspended?): cached (workspace-cache.ts). */
  workspaces: Pick<WorkspaceCache, 'get' | 'ownerOf' | 'poolOwner'>;
}

/**
 * The guard every admin route runs after the admin authentication: for a console session, the
 * row's `console` first (404 for an operator's route, 403 for an agent on an admin's), then the
 * ids of the path against the session's workspace — `:workspaceId` its own, `:deviceId` a device
 * it owns (default owns every device no workspace names), `:poolId` its pool — each answered 404
 * as for an id nobody has (`Workspace not found`, `Device not found`, `Pool not found`), whoever
 * holds it. A console user of a suspended workspace gets 403 `This workspace is suspended`, as its
 * tokens do (the operator viewing it does not). Nothing for the operator's own calls.
 */
export function consoleGuard(access: ConsoleAccess | undefined, deps: ConsoleScopeDeps): RequestHandler {
  return async (req, res, next) => {
    try {
      const scope = adminScopeOf(res);
      if (!scope || access === 'session') return next();
      if (!access) throw new ApiError(404, ERRORS.notFound);
      if (scope.user && (await deps.workspaces.get(scope.workspace))?.status === 'suspended')
        throw new ApiError(403, ERRORS.workspaceSuspended);
      if (access === 'admin' && scope.role !== 'admin') throw new ApiError(403, ADMIN_ERRORS.roleCannot);
      const { workspaceId, deviceId, poolId } = req.params as Record<string, string | undefined>;
      if (workspaceId !== undefined && workspaceId !== scope.workspace)
        throw new ApiError(404, ADMIN_ERRORS.workspaceNotFound);
      if (deviceId !== undefined && !(await ownsDevice(deps, scope, deviceId)))
        throw new ApiError(404, ADMIN_ERRORS.deviceNotFound);
      if (poolId !== undefined && !(await ownsPool(deps, scope, poolId)))
        throw new ApiError(404, ADMIN_ERRORS.poolNotFound);
      next();
    } catch (err) {
      next(err);
    }
  };
}

/** Whether the scope's workspace owns the device (an id no device could have: no). */
export async function ownsDevice(
  deps: ConsoleScopeDeps,
  scope: AdminScope,
  deviceId: string,
): Promise<boolean> {
  return DEVICE_ID_PATTERN.test(deviceId) && (await deps.workspaces.ownerOf(deviceId)) === scope.workspace;
}

async function ownsPool(deps: ConsoleScopeDeps, scope: AdminScope, poolId: string): Promise<boolean> {
  return POOL_ID_PATTERN.test(poolId) && (await deps.workspaces.poolOwner(poolId)) === scope.workspace;
}

/**
 * A known admin path called with a method it does not serve: 405 naming its methods — for a
 * console session, only those it may call (`visible`), and when it may call none, the base's 404,
 * as for a path that does not exist.
 */
export function scopedMethodNotAllowed(allow: string, visible: string | undefined): RequestHandler {
  return (_req, res, next) => {
    const shown = adminScopeOf(res) ? visible : allow;
    if (!shown) return next(new ApiError(404, ERRORS.notFound));
    res.setHeader('Allow', shown);
    next(new ApiError(405, ERRORS.methodNotAllowed));
  };
}
