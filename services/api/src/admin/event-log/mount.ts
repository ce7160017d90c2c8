import type { RequestHandler } from 'express';
import { ERRORS, emptyQuerySchema } from '@mgw/contracts';
import { eventsRoute, getEventBrokersRoute } from '../../features/events/mount.js';
import { ApiError } from '../../http/api-error.js';
import { parse } from '../../http/validation.js';
import { deviceIdOf, type AdminMount } from '../admin-routes.js';
import { outletsReader } from './outlets.js';
import { recentEvents, recentEventsQuerySchema } from './recent-events.js';
import { retryNower } from './retry-now.js';

/**
 * A device's event log and its ways out (the dashboard's Events tab):
 *
 * - GET …/events: the public GET /events (oldest first, `after`), the device from the path;
 * - GET …/events/recent: the same log newest first (`before`, `types`, `limit` ≤ 100);
 * - GET …/events/brokers: the public GET /events/brokers, the device from the path;
 * - GET …/event-outlets: what the webhook and the broker relays did (outlets.ts);
 * - POST …/webhook/retry-now: the webhook's waiting retries due now (retry-now.ts); 404 without
 *   an endpoint. Like every admin route it carries no per-token rate limit.
 */
export const eventLog: AdminMount = ({ s, guard, none }) => {
  const device = '/devices/:deviceId';
  const outlets = outletsReader(s);
  const retryNow = retryNower(s);
  const recent: RequestHandler = async (req, res) => {
    const deviceId = deviceIdOf(req);
    const q = parse(recentEventsQuerySchema, req.query);
    res.status(200).json({ success: true, data: await recentEvents(s.eventLog, deviceId, q) });
  };
  const ways: RequestHandler = async (req, res) => {
    const deviceId = deviceIdOf(req);
    parse(emptyQuerySchema, req.query);
    res.status(200).json({ success: true, data: await outlets(deviceId) });
  };
  const retry: RequestHandler = async (req, res) => {
    const deviceId = deviceIdOf(req);
    parse(emptyQuerySchema, req.query);
    const r = await retryNow(deviceId);
    if (r.kind === 'no_webhook') throw new ApiError(404, ERRORS.webhookNotFound);
    res.status(200).json({ success: true, data: { waiting: r.waiting, madeDue: r.madeDue } });
  };
  return [
    { method: 'get', path: `${device}/events`, handlers: [guard, eventsRoute(s, deviceIdOf)] },
    { method: 'get', path: `${device}/events/recent`, handlers: [guard, recent] },
    {
      method: 'get',
      path: `${device}/events/brokers`,
      handlers: [guard, getEventBrokersRoute(s, deviceIdOf)],
    },
    { method: 'get', path: `${device}/event-outlets`, handlers: [guard, ways] },
    { method: 'post', path: `${device}/webhook/retry-now`, handlers: [guard, none, retry] },
  ];
};
