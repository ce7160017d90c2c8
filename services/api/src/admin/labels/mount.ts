import { labelRoutes } from '../../features/labels/mount.js';
import { deviceIdOf, type AdminMount } from '../admin-routes.js';

/**
 * A device's business labels for the dashboard's Labels tab (docs/labels.md): the public label
 * routes (features/labels) with the device named by the path, behind the admin guard. A chat's
 * labels and state are the Chats page's (admin/chats). Like every admin route, no per-token rate
 * limit (the public routes share RATE_LIMIT_GROUPS) and no Idempotency-Key.
 */
export const labels: AdminMount = ({ s, guard, body, none }) => {
  const r = labelRoutes(s, deviceIdOf);
  const device = '/devices/:deviceId';
  return [
    { method: 'get', path: `${device}/labels`, handlers: [guard, r.listLabels] },
    { method: 'post', path: `${device}/labels`, handlers: [guard, body, r.createLabel] },
    { method: 'patch', path: `${device}/labels/:labelId`, handlers: [guard, body, r.updateLabel] },
    { method: 'delete', path: `${device}/labels/:labelId`, handlers: [guard, none, r.deleteLabel] },
    { method: 'get', path: `${device}/labels/:labelId/chats`, handlers: [guard, r.labelChats] },
  ];
};
