import type { RequestHandler } from 'express';
import { eventTypeList, eventsQuerySchema } from '@mgw/contracts';
import type { ApiServices } from '../api-services.js';
import { authOf } from '../http/auth.js';
import { parse } from '../http/validation.js';

/**
 * GET /events: the device's events after `after` (its event log, see @mgw/store's
 * events/event-log.ts), oldest first, a page at a time: every event, whether the webhook wants it
 * or not, kept for EVENT_LOG_RETENTION_HOURS. A cursor older than the log holds answers from its
 * oldest event with `truncated: true`. The device's log is trimmed to the window first (cheap: only
 * whole expired stream nodes go), so a device read by polling keeps no more than its window.
 */
export function eventsRoute(s: ApiServices): RequestHandler {
  return async (req, res) => {
    const { deviceId } = authOf(res);
    const q = parse(eventsQuerySchema, req.query);
    await s.eventLog.trim([deviceId]);
    const data = await s.eventLog.read(deviceId, {
      limit: q.limit,
      ...(q.after ? { after: q.after } : {}),
      ...(q.types ? { types: eventTypeList(q.types) } : {}),
    });
    res.status(200).json({ success: true, data });
  };
}
