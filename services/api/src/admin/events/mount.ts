import { Joi } from '@mgw/contracts';
import type { RequestHandler } from 'express';
import {
  DEVICE_ID_PATTERN,
  ERRORS,
  EVENT_CURSOR_PATTERN,
  eventStreamQuerySchema,
  eventTypeList,
} from '@mgw/contracts';
import type { ApiServices } from '../../api-services.js';
import { SseOutput } from '../../http/sse-output.js';
import { ApiError } from '../../http/api-error.js';
import { parse } from '../../http/validation.js';
import type { AdminMount } from '../admin-routes.js';
import { adminOf } from '../../http/session/admin-auth.js';

/** The dashboard's live views: every device's events (or one device's), as Server-Sent Events. */
export const events: AdminMount = ({ s, guard }) => [
  { method: 'get', path: '/events/stream', handlers: [guard, adminEventStreamRoute(s)] },
];

/**
 * GET /api/admin/v1/events/stream: the dashboard's live views (Devices, Messages) as Server-Sent
 * Events over the admin session — the same engine (features/events/event-streams.ts) as the public
 * GET /events/stream, the same backpressure, keep-alives and shutdown. With `device`, that
 * device's log, resumable by `Last-Event-ID` (what `EventSource` sends by itself); without it,
 * every device's events from now on (each with its `deviceId`): the page reloads what it shows
 * when the stream (re)opens, then applies what arrives. An admin session (or admin token) holds at
 * most EVENT_STREAMS_PER_TOKEN of them per API process, as an API token does.
 */
const querySchema = Joi.object<{ device?: string; types?: string; after?: string }>({
  device: Joi.string()
    .pattern(DEVICE_ID_PATTERN)
    .messages({ 'string.pattern.base': '"device" must be a device id' }),
  types: eventStreamQuerySchema.extract('types'),
  after: eventStreamQuerySchema.extract('after'),
});

export function adminEventStreamRoute(s: ApiServices): RequestHandler {
  return async (req, res) => {
    const q = parse(querySchema, req.query);
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
      ...(after ? { after } : {}),
      ...(q.types ? { types: eventTypeList(q.types) } : {}),
    });
  };
}
