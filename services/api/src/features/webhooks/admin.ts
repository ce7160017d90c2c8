import type { RequestHandler } from 'express';
import { deviceIdOf } from '../../http/route-helpers.js';
import { ADMIN_JSON, type AdminRoute } from '../../http/route-table.js';
import type { DeviceOf, WebhookHandlers } from './mount.js';

export type WebhookAdminName = 'adminGetWebhook' | 'adminPutWebhook' | 'adminDeleteWebhook';

/**
 * A device's webhook: read, set (rotateSecret: true rotates), remove — the public /webhook's
 * handlers, with the device named by the path.
 */
export const webhookAdminRoutes: AdminRoute<WebhookAdminName>[] = [
  {
    surface: 'admin',
    method: 'get',
    path: '/devices/:deviceId/webhook',
    handler: 'adminGetWebhook',
    console: 'read',
  },
  {
    surface: 'admin',
    method: 'put',
    path: '/devices/:deviceId/webhook',
    body: ADMIN_JSON,
    handler: 'adminPutWebhook',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'delete',
    path: '/devices/:deviceId/webhook',
    body: 'none',
    handler: 'adminDeleteWebhook',
    console: 'admin',
  },
];

/**
 * The handlers of the rows: the public ones (mount.ts hands them over, made for a device), for
 * the device the path names.
 */
export function webhookAdminHandlers(
  forDevice: (deviceOf: DeviceOf) => WebhookHandlers,
): Record<WebhookAdminName, RequestHandler> {
  const r = forDevice(deviceIdOf);
  return { adminGetWebhook: r.get, adminPutWebhook: r.put, adminDeleteWebhook: r.remove };
}
