import type { RequestHandler } from 'express';
import { jsonBody } from '../../http/body.js';
import { MAX_JSON_DEPTH } from '../../http/route-table.js';
import { GROUP_BODY, groupHandlers } from '../../features/groups/mount.js';
import { deviceIdOf, type AdminMount } from '../admin-routes.js';

/**
 * A device's groups for the dashboard (docs/groups.md): the public group routes (features/groups)
 * with the device named by the path, behind the admin guard. Their bodies have the public limits
 * (8 KB, 50 participants). Unlike the public routes they carry no per-token rate limit
 * (RATE_LIMIT_GROUPS) and no Idempotency-Key handling: an operator's click is one request.
 */
export const groups: AdminMount = ({ s, guard, none }) => {
  const r = groupHandlers(s, deviceIdOf);
  const body = jsonBody({
    ...GROUP_BODY.json,
    maxDepth: MAX_JSON_DEPTH,
    idleTimeoutMs: s.config.http.bodyIdleTimeoutMs,
  });
  // The device's id is checked first (400 naming `deviceId`), before the group's id or the body.
  const device: RequestHandler = (req, _res, next) => {
    deviceIdOf(req);
    next();
  };
  const base = '/devices/:deviceId/groups';
  return [
    { method: 'get', path: base, handlers: [guard, device, r.list] },
    { method: 'post', path: base, handlers: [guard, device, body, r.create] },
    { method: 'post', path: `${base}/join`, handlers: [guard, device, body, r.join] },
    { method: 'get', path: `${base}/:id`, handlers: [guard, device, r.get] },
    { method: 'patch', path: `${base}/:id`, handlers: [guard, device, body, r.update] },
    { method: 'post', path: `${base}/:id/participants`, handlers: [guard, device, body, r.participants] },
    { method: 'post', path: `${base}/:id/leave`, handlers: [guard, device, none, r.leave] },
    { method: 'get', path: `${base}/:id/invite`, handlers: [guard, device, r.invite] },
    { method: 'post', path: `${base}/:id/invite/revoke`, handlers: [guard, device, none, r.revokeInvite] },
  ];
};
