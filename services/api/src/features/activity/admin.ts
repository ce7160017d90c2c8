import type { RequestHandler } from 'express';
import { Joi } from '@mgw/contracts';
import { ACTIVITY_STATUSES, DEVICE_ACTIVITY_MAX_HOURS, DeviceActivity } from '@mgw/store';
import type { Uses } from '../../api-services.js';
import { deviceIdOf } from '../../http/route-helpers.js';
import type { AdminRoute } from '../../http/route-table.js';
import { parse } from '../../http/validation.js';

export type ActivityAdminName = 'deviceActivity';

/** The device's sending per hour: the Campaigns page's chart. */
export const activityAdminRoutes: AdminRoute<ActivityAdminName>[] = [
  {
    surface: 'admin',
    method: 'get',
    path: '/devices/:deviceId/activity',
    handler: 'deviceActivity',
    console: 'read',
  },
];

export function activityAdminHandlers(s: Uses<'redis'>): Record<ActivityAdminName, RequestHandler> {
  return { deviceActivity: deviceActivityRoute(new DeviceActivity(s.redis)) };
}

export const activityQuerySchema = Joi.object<{ hours: number }>({
  hours: Joi.number().integer().min(1).max(DEVICE_ACTIVITY_MAX_HOURS).default(24),
});

/**
 * GET /devices/:deviceId/activity?hours=24 — the device's sending per UTC hour (the Campaigns
 * chart): the last `hours` hours up to the current one, oldest first, every hour present (zeros
 * where nothing happened), each with how many messages were sent, delivered, read and failed in
 * it, and the totals. A device that never sent answers zeros, as its counters simply do not exist.
 */
function deviceActivityRoute(activity: DeviceActivity): RequestHandler {
  return async (req, res) => {
    const { hours } = parse(activityQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    const buckets = await activity.lastHours(deviceId, hours);
    const totals = Object.fromEntries(
      ACTIVITY_STATUSES.map((s) => [s, buckets.reduce((sum, h) => sum + h[s], 0)]),
    );
    res.status(200).json({ success: true, deviceId, hours: buckets, totals });
  };
}
