import type { Request, RequestHandler, Response } from 'express';
import type { Uses } from '../../api-services.js';
import { jsonBody, noBody } from '../../http/body.js';
import { deviceIdOf } from '../../http/route-helpers.js';
import { MAX_JSON_DEPTH, type AdminRoute, type BodySpec } from '../../http/route-table.js';
import type { GroupHandlers } from './mount.js';

export type GroupAdminName =
  | 'adminList'
  | 'adminCreate'
  | 'adminJoin'
  | 'adminGet'
  | 'adminUpdate'
  | 'adminParticipants'
  | 'adminLeave'
  | 'adminInvite'
  | 'adminRevokeInvite';

const base = '/devices/:deviceId/groups';

/**
 * A device's groups for the dashboard (docs/groups.md): the public group routes with the device
 * named by the path, behind the admin guard, with no per-token rate limit (RATE_LIMIT_GROUPS is the
 * public tokens'). The rows name no body: each handler checks the device's id before it reads the
 * body (groupAdminHandlers).
 */
export const groupAdminRoutes: AdminRoute<GroupAdminName>[] = [
  { surface: 'admin', method: 'get', path: base, handler: 'adminList', console: 'read' },
  { surface: 'admin', method: 'post', path: base, handler: 'adminCreate', console: 'admin' },
  { surface: 'admin', method: 'post', path: `${base}/join`, handler: 'adminJoin', console: 'admin' },
  { surface: 'admin', method: 'get', path: `${base}/:id`, handler: 'adminGet', console: 'read' },
  { surface: 'admin', method: 'patch', path: `${base}/:id`, handler: 'adminUpdate', console: 'admin' },
  {
    surface: 'admin',
    method: 'post',
    path: `${base}/:id/participants`,
    handler: 'adminParticipants',
    console: 'admin',
  },
  { surface: 'admin', method: 'post', path: `${base}/:id/leave`, handler: 'adminLeave', console: 'admin' },
  { surface: 'admin', method: 'get', path: `${base}/:id/invite`, handler: 'adminInvite', console: 'read' },
  {
    surface: 'admin',
    method: 'post',
    path: `${base}/:id/invite/revoke`,
    handler: 'adminRevokeInvite',
    console: 'admin',
  },
];

/**
 * The admin rows' handlers: `r`, the public handlers with the device from the path (mount.ts),
 * each after the device's id is checked (a 400 naming `deviceId` comes first, before the group's
 * id or the body) and then its body is read, with the public route's limits (`body`: 8 KB, 50
 * participants; the public depth).
 */
export function groupAdminHandlers(
  s: Uses<'config'>,
  r: GroupHandlers,
  body: Extract<BodySpec, { json: unknown }>,
): Record<GroupAdminName, RequestHandler> {
  const json = jsonBody({
    ...body.json,
    maxDepth: MAX_JSON_DEPTH,
    idleTimeoutMs: s.config.http.bodyIdleTimeoutMs,
  });
  const none = noBody();
  return {
    adminList: atDevice(r.list),
    adminCreate: atDevice(r.create, json),
    adminJoin: atDevice(r.join, json),
    adminGet: atDevice(r.get),
    adminUpdate: atDevice(r.update, json),
    adminParticipants: atDevice(r.participants, json),
    adminLeave: atDevice(r.leave, none),
    adminInvite: atDevice(r.invite),
    adminRevokeInvite: atDevice(r.revokeInvite, none),
  };
}

/** One handler: the path's device id checked, then `read` (the body), then `handler`. */
function atDevice(handler: RequestHandler, read?: RequestHandler): RequestHandler {
  return (req: Request, res: Response, next) => {
    deviceIdOf(req);
    if (!read) return handler(req, res, next);
    read(req, res, (err?: unknown) => {
      if (err) return next(err);
      // Run as express runs a handler: a throw or a rejection goes to the error middleware.
      Promise.resolve()
        .then(() => handler(req, res, next))
        .catch(next);
    });
  };
}
