import type { RequestHandler } from 'express';
import { ADMIN_JSON, type AdminRoute } from '../../http/route-table.js';
import type { LabelName } from './mount.js';

/** The admin routes' handlers: the public ones' names with `admin` in front. */
export type LabelAdminName = `admin${Capitalize<LabelName>}`;

const device = '/devices/:deviceId';
const chat = `${device}/chats/:chatId`;

/**
 * A device's business labels for the dashboard's Labels tab, and a chat's labels and its archive,
 * pin and mute for its Chats page (docs/labels.md): the public label routes with the device named
 * by the path. Like every admin route, no per-token rate limit (the public routes share
 * RATE_LIMIT_GROUPS).
 */
export const labelAdminRoutes: AdminRoute<LabelAdminName>[] = [
  { surface: 'admin', method: 'get', path: `${device}/labels`, handler: 'adminListLabels', console: 'read' },
  {
    surface: 'admin',
    method: 'post',
    path: `${device}/labels`,
    body: ADMIN_JSON,
    handler: 'adminCreateLabel',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'patch',
    path: `${device}/labels/:labelId`,
    body: ADMIN_JSON,
    handler: 'adminUpdateLabel',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'delete',
    path: `${device}/labels/:labelId`,
    body: 'none',
    handler: 'adminDeleteLabel',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'get',
    path: `${device}/labels/:labelId/chats`,
    handler: 'adminLabelChats',
    console: 'read',
  },
  {
    surface: 'admin',
    method: 'patch',
    path: chat,
    body: ADMIN_JSON,
    handler: 'adminChatState',
    console: 'admin',
  },
  { surface: 'admin', method: 'get', path: `${chat}/labels`, handler: 'adminChatLabels', console: 'read' },
  {
    surface: 'admin',
    method: 'post',
    path: `${chat}/labels`,
    body: ADMIN_JSON,
    handler: 'adminLabelChat',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'delete',
    path: `${chat}/labels/:labelId`,
    body: 'none',
    handler: 'adminUnlabelChat',
    console: 'admin',
  },
];

/**
 * The admin routes' handlers: the public routes' handlers built for the device the path names
 * (mount.ts builds them: `labelRoutes(s, deviceIdOf)`), under their admin names.
 */
export function labelAdminHandlers(
  forPathDevice: Record<LabelName, RequestHandler>,
): Record<LabelAdminName, RequestHandler> {
  const r = forPathDevice;
  return {
    adminListLabels: r.listLabels,
    adminCreateLabel: r.createLabel,
    adminUpdateLabel: r.updateLabel,
    adminDeleteLabel: r.deleteLabel,
    adminLabelChats: r.labelChats,
    adminChatState: r.chatState,
    adminChatLabels: r.chatLabels,
    adminLabelChat: r.labelChat,
    adminUnlabelChat: r.unlabelChat,
  };
}
