import type { RequestHandler } from 'express';
import type { AdminRoute } from '../../http/route-table.js';
import type { StatusHandlers } from './mount.js';
import { statusBody, settingsBody } from './bodies.js';

export type StatusAdminName =
  'adminPost' | 'adminList' | 'adminGetSettings' | 'adminPutSettings' | 'adminRemove';

const base = '/devices/:deviceId/statuses';

/**
 * A device's status updates for the dashboard (the Statuses tab, docs/broadcasts.md): the public
 * status routes with the device named by the path, behind the admin guard — the same use cases,
 * bodies, limits and answers. No per-token rate limit (RATE_LIMIT_BROADCASTS is the public
 * tokens'): the admin guard is the gate.
 */
export const statusAdminRoutes: AdminRoute<StatusAdminName>[] = [
  { surface: 'admin', method: 'post', path: base, body: statusBody, handler: 'adminPost', console: 'admin' },
  { surface: 'admin', method: 'get', path: base, handler: 'adminList', console: 'read' },
  { surface: 'admin', method: 'get', path: `${base}/settings`, handler: 'adminGetSettings', console: 'read' },
  {
    surface: 'admin',
    method: 'put',
    path: `${base}/settings`,
    body: settingsBody,
    handler: 'adminPutSettings',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'delete',
    path: `${base}/:id`,
    body: 'none',
    handler: 'adminRemove',
    console: 'admin',
  },
];

/** The admin rows' handlers: `r`, the public handlers with the device from the path (mount.ts). */
export function statusAdminHandlers(r: StatusHandlers): Record<StatusAdminName, RequestHandler> {
  return {
    adminPost: r.post,
    adminList: r.list,
    adminGetSettings: r.getSettings,
    adminPutSettings: r.putSettings,
    adminRemove: r.remove,
  };
}
