import type { RequestHandler } from 'express';
import {
  DEVICE_ID_PATTERN,
  ERRORS,
  EVENT_CURSOR_PATTERN,
  Joi,
  emptyQuerySchema,
  eventStreamQuerySchema,
  eventTypeList,
} from '@mgw/contracts';
import type { Uses } from '../../api-services.js';
import { ApiError } from '../../http/api-error.js';
import { deviceIdOf } from '../../http/route-helpers.js';
import type { AdminRoute } from '../../http/route-table.js';
import { adminOf } from '../../http/session/admin-auth.js';
import { adminScopeOf, ownsDevice } from '../../http/session/console-scope.js';
import { SseOutput } from '../../http/sse-output.js';
import { parse } from '../../http/validation.js';
import { outletsReader } from './outlets.js';
import { recentEvents, recentEventsQuerySchema } from './recent-events.js';
import { retryNower } from './retry-now.js';

export type EventAdminName =
  | 'adminEventStream'
  | 'adminDeviceEvents'
  | 'adminRecentEvents'
  | 'adminDeviceBrokers'
  | 'adminEventOutlets'
  | 'adminRetryNow';

const device = '/devices/:deviceId';

/**
 * The dashboard's live views (every device's events, or one device's, as Server-Sent Events), and
 * a device's event log and its ways out (the Events tab):
 *
 * - GET …/events: the public GET /events (oldest first, `after`), the device from the path;
 * - GET …/events/recent: the same log newest first (`before`, `types`, `limit` ≤ 100);
 * - GET …/events/brokers: the public GET /events/brokers, the device from the path;
 * - GET …/event-outlets: what the webhook and the broker relays did (outlets.ts);
 * - POST …/webhook/retry-now: the webhook's waiting retries due now (retry-now.ts); 404 without
 *   an endpoint. Like every admin route it carries no per-token rate limit.
 */
export const eventAdminRoutes: AdminRoute<EventAdminName>[] = [
  { surface: 'admin', method: 'get', path: '/events/stream', handler: 'adminEventStream', console: 'read' },
  {
    surface: 'admin',
    method: 'get',
    path: `${device}/events`,
    handler: 'adminDeviceEvents',
    console: 'read',
  },
  {
    surface: 'admin',
    method: 'get',
    path: `${device}/events/recent`,
    handler: 'adminRecentEvents',
    console: 'read',
  },
  {
    surface: 'admin',
    method: 'get',
    path: `${device}/events/brokers`,
    handler: 'adminDeviceBrokers',
    console: 'read',
  },
  {
    surface: 'admin',
    method: 'get',
    path: `${device}/event-outlets`,
    handler: 'adminEventOutlets',
    console: 'read',
  },
  {
    surface: 'admin',
    method: 'post',
    path: `${device}/webhook/retry-now`,
    body: 'none',
    handler: 'adminRetryNow',
    console: 'admin',
  },
];

/**
 * The admin rows' handlers. `read`: the public GET /events and GET /events/brokers with the device
 * from the path (mount.ts).
 */
export function eventAdminHandlers(
  s: Uses<'eventStreams' | 'eventLog' | 'redis' | 'encryption' | 'webhooks' | 'logger' | 'workspaceCache'>,
  read: { events: RequestHandler; brokers: RequestHandler },
): Record<EventAdminName, RequestHandler> {
  const outlets = outletsReader(s);
  const retryNow = retryNower(s);
  return {
    adminEventStream: adminEventStreamRoute(s),
    adminDeviceEvents: read.events,
    adminRecentEvents: async (req, res) => {
      const deviceId = deviceIdOf(req);
      const q = parse(recentEventsQuerySchema, req.query);
      res.status(200).json({ success: true, data: await recentEvents(s.eventLog, deviceId, q) });
    },
    adminDeviceBrokers: read.brokers,
    adminEventOutlets: async (req, res) => {
      const deviceId = deviceIdOf(req);
      parse(emptyQuerySchema, req.query);
      res.status(200).json({ success: true, data: await outlets(deviceId) });
    },
    adminRetryNow: async (req, res) => {
      const deviceId = deviceIdOf(req);
      parse(emptyQuerySchema, req.query);
      const r = await retryNow(deviceId);
      if (r.kind === 'no_webhook') throw new ApiError(404, ERRORS.webhookNotFound);
      res.status(200).json({ success: true, data: { waiting: r.waiting, madeDue: r.madeDue } });
    },
  };
}

export const streamQuerySchema = Joi.object<{ device?: string; types?: string; after?: string }>({
  device: Joi.string()
    .pattern(DEVICE_ID_PATTERN)
    .messages({ 'string.pattern.base': '"device" must be a device id' }),
  types: eventStreamQuerySchema.extract('types'),
  after: eventStreamQuerySchema.extract('after'),
});

/**
 * GET /api/admin/v1/events/stream: the dashboard's live views (Devices, Messages) as Server-Sent
 * Events over the admin session — the same engine (event-streams.ts) as the public
 * GET /events/stream, the same backpressure, keep-alives and shutdown. With `device`, that
 * device's log, resumable by `Last-Event-ID` (what `EventSource` sends by itself); without it,
 * every device's events from now on (each with its `deviceId`): the page reloads what it shows
 * when the stream (re)opens, then applies what arrives. An admin session (or admin token) holds at
 * most EVENT_STREAMS_PER_TOKEN of them per API process, as an API token does. A workspace's console
 * (docs/workspaces.md "The console") follows its own devices only: every device's stream sends
 * those only, and a `device` of another workspace is 404 as a device nobody has.
 */
function adminEventStreamRoute(s: Uses<'eventStreams' | 'workspaceCache'>): RequestHandler {
  return async (req, res) => {
    const q = parse(streamQuerySchema, req.query);
    const scope = adminScopeOf(res);
    const deps = { workspaces: s.workspaceCache };
    if (scope && q.device && !(await ownsDevice(deps, scope, q.device)))
      throw new ApiError(404, ERRORS.deviceNotFound);
    const caller = adminOf(res);
    const key =
      caller.via === 'session'
        ? `admin-session:${caller.sessionId}`
        : `admin-token:${caller.tokenId ?? 'env'}`;
    const header = req.get('last-event-id');
    if (header !== undefined && !EVENT_CURSOR_PATTERN.test(header))
      throw ApiError.invalid([
        { path: ['Last-Event-ID'], message: '"Last-Event-ID" must be the id of an event this stream sent' },
      ]);
    // Every device's stream starts from now: a cursor names a place in one device's log only.
    const after = q.device ? (header ?? q.after) : undefined;
    if (!s.eventStreams.canOpen(key)) throw new ApiError(429, ERRORS.tooManyEventStreams);
    if (req.method === 'HEAD') {
      res.status(200).type('text/event-stream').end();
      return;
    }
    await s.eventStreams.open(new SseOutput(res, { withDevice: true }), {
      key,
      devices: q.device ? { one: q.device } : 'all',
      ...(scope && !q.device ? { only: (deviceId: string) => ownsDevice(deps, scope, deviceId) } : {}),
      ...(after ? { after } : {}),
      ...(q.types ? { types: eventTypeList(q.types) } : {}),
    });
  };
}
