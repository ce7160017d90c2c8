import type { Request, RequestHandler, Response } from 'express';
import { Joi, emptyQuerySchema } from '@mgw/contracts';
import { CONSOLE_PASSWORD_LIMITS, CONSOLE_ROLES, CONSOLE_USER_PATTERN, type ConsoleRole } from '@mgw/store';
import { ApiError } from '../../http/api-error.js';
import { ADMIN_ERRORS } from '../../http/admin-errors.js';
import { workspaceQuotaError } from '../../http/refusal-error.js';
import { ADMIN_JSON, type AdminRoute } from '../../http/route-table.js';
import { adminScopeOf } from '../../http/session/console-scope.js';
import { KdfBusy, passwordProblem } from '../../http/session/password-hash.js';
import { parse } from '../../http/validation.js';
import { addUser, changeUser, listUsers, removeUser, type Actor, type UsersDeps } from './users.js';

export type ConsoleAdminName = 'listUsers' | 'addUser' | 'changeUser' | 'removeUser';

const users = '/workspaces/:workspaceId/users';

/**
 * A workspace's console users (docs/workspaces.md "The console"): its admin's and the operator's to
 * list, add, change (password, role) and remove. An agent gets 403 on all four, the list included
 * (who may sign in to the workspace is its admins' to know).
 */
export const consoleAdminRoutes: AdminRoute<ConsoleAdminName>[] = [
  { surface: 'admin', method: 'get', path: users, handler: 'listUsers', console: 'admin' },
  { surface: 'admin', method: 'post', path: users, body: ADMIN_JSON, handler: 'addUser', console: 'admin' },
  {
    surface: 'admin',
    method: 'patch',
    path: `${users}/:user`,
    body: ADMIN_JSON,
    handler: 'changeUser',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'delete',
    path: `${users}/:user`,
    body: 'none',
    handler: 'removeUser',
    console: 'admin',
  },
];

const userName = Joi.string().trim().lowercase().max(64).pattern(CONSOLE_USER_PATTERN).messages({
  'string.pattern.base':
    '{{#label}} must be a user name: 3-64 characters of a-z, 0-9, ., _, @ or -, starting with a letter or digit',
});

/**
 * 12 to 1,024 characters (code points, NFC), valid Unicode (the project's `Joi.string()` refuses a
 * lone surrogate first); never echoed in an answer.
 */
const PASSWORD_RULE = `{{#label}} must be ${CONSOLE_PASSWORD_LIMITS.minLength} to ${CONSOLE_PASSWORD_LIMITS.maxLength} characters long`;
const password = Joi.string()
  .max(4 * CONSOLE_PASSWORD_LIMITS.maxLength)
  .custom(
    (v: string, helpers) => (passwordProblem(v) ? helpers.error('password.length') : v),
    `${CONSOLE_PASSWORD_LIMITS.minLength} to ${CONSOLE_PASSWORD_LIMITS.maxLength} characters`,
  )
  .messages({ 'string.max': PASSWORD_RULE, 'string.empty': PASSWORD_RULE, 'password.length': PASSWORD_RULE });

const role = Joi.string().valid(...CONSOLE_ROLES);

export const addUserSchema = Joi.object<{ user: string; password: string; role: ConsoleRole }>({
  user: userName.required(),
  password: password.required(),
  role: role.required(),
});

export const changeUserSchema = Joi.object<{ password?: string; role?: ConsoleRole }>({ password, role }).min(
  1,
);

/** The handlers, over the admin API's users, password KDF and the workspaces' records. */
export function consoleAdminHandlers(deps: UsersDeps): Record<ConsoleAdminName, RequestHandler> {
  /** The workspace the path names (the console's guard has held it to the session's own), or 404. */
  const workspaceOf = async (req: Request): Promise<string> => {
    const id = String(req.params.workspaceId ?? '');
    if (!(await deps.workspaces.get(id))) throw new ApiError(404, ADMIN_ERRORS.workspaceNotFound);
    return id;
  };
  const nameOf = (req: Request) => String(req.params.user ?? '').toLowerCase();
  const actorOf = (res: Response): Actor => {
    const user = adminScopeOf(res)?.user;
    return user ? { user } : {};
  };
  /** The KDF's gate full: 503, the request may be sent again in a moment. */
  const hashing = async <T>(res: Response, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      if (!(err instanceof KdfBusy)) throw err;
      res.setHeader('Retry-After', '1');
      throw new ApiError(503, ADMIN_ERRORS.passwordBusy);
    }
  };
  return {
    listUsers: async (req, res) => {
      parse(emptyQuerySchema, req.query);
      const workspace = await workspaceOf(req);
      res.status(200).json({ success: true, users: await listUsers(deps, workspace) });
    },
    addUser: async (req, res) => {
      parse(emptyQuerySchema, req.query);
      const body = parse(addUserSchema, req.body ?? {});
      const workspace = await workspaceOf(req);
      const made = await hashing(res, () => addUser(deps, workspace, body));
      if (made === 'no_workspace') throw new ApiError(404, ADMIN_ERRORS.workspaceNotFound);
      if (made === 'taken') throw new ApiError(409, ADMIN_ERRORS.userTaken);
      if (made === 'full') throw workspaceQuotaError('users', deps.maxUsers);
      req.log.info('console user added', { workspaceId: workspace, user: made.user, role: made.role });
      res.status(201).json({ success: true, user: made });
    },
    changeUser: async (req, res) => {
      parse(emptyQuerySchema, req.query);
      const change = parse(changeUserSchema, req.body ?? {});
      const workspace = await workspaceOf(req);
      const name = nameOf(req);
      const changed = await hashing(res, () => changeUser(deps, workspace, name, change, actorOf(res)));
      if (changed === 'not_found') throw new ApiError(404, ADMIN_ERRORS.userNotFound);
      if (changed === 'own_user') throw new ApiError(409, ADMIN_ERRORS.ownUser);
      req.log.info('console user changed', {
        workspaceId: workspace,
        user: name,
        role: change.role,
        password: change.password !== undefined ? 'changed' : undefined,
      });
      res.status(200).json({ success: true, user: changed });
    },
    removeUser: async (req, res) => {
      parse(emptyQuerySchema, req.query);
      const workspace = await workspaceOf(req);
      const name = nameOf(req);
      const removed = await removeUser(deps, workspace, name, actorOf(res));
      if (removed === 'not_found') throw new ApiError(404, ADMIN_ERRORS.userNotFound);
      if (removed === 'own_user') throw new ApiError(409, ADMIN_ERRORS.ownUser);
      req.log.info('console user removed', { workspaceId: workspace, user: name });
      res.status(200).json({ success: true });
    },
  };
}
