import { deleteWebhookRoute, getWebhookRoute, putWebhookRoute } from '../../features/webhooks/mount.js';
import { deviceIdOf, type AdminMount } from '../admin-routes.js';

/**
 * A device's webhook: read, set (rotateSecret: true rotates), remove — the public /webhook's
 * handlers (features/webhooks), with the device named by the path.
 */
export const webhooks: AdminMount = ({ s, guard, body, none }) => [
  { method: 'get', path: '/devices/:deviceId/webhook', handlers: [guard, getWebhookRoute(s, deviceIdOf)] },
  {
    method: 'put',
    path: '/devices/:deviceId/webhook',
    handlers: [guard, body, putWebhookRoute(s, deviceIdOf)],
  },
  {
    method: 'delete',
    path: '/devices/:deviceId/webhook',
    handlers: [guard, none, deleteWebhookRoute(s, deviceIdOf)],
  },
];
