import {
  ERRORS,
  EVENT_CURSOR_PATTERN,
  eventStreamQuerySchema,
  eventTypeList,
  eventsQuerySchema,
  brokerSettingsBodySchema,
  emptyQuerySchema,
} from '@mgw/contracts';
import { eventSocketRoute } from '../../events/event-socket.js';
import { FIELD_ALLOWANCE, feature, type BodySpec } from '../../http/route-table.js';
import { eventLogSchemas, eventPaths } from './openapi.js';
import type { RequestHandler } from 'express';
import type { ApiServices } from '../../api-services.js';
import { ApiError } from '../../http/api-error.js';
import { authOf } from '../../http/auth.js';
import { parse } from '../../http/validation.js';
import { SseOutput } from '../../events/event-streams.js';

/** PUT /events/brokers: two transports' on/off and event types (the webhook body's 8 KB and answer). */
const brokersBody: BodySpec = {
  json: { limitBytes: 8 * 1024, tooLargeError: ERRORS.webhookBodyTooLarge, maxValues: FIELD_ALLOWANCE },
};

/**
 * The device's event log (docs/events.md): pulled (GET /events), streamed (SSE, WebSocket), and
 * whether it is published to the operator's brokers.
 */
export const events = feature({
  name: 'events',
  routes: [
    { method: 'get', path: '/events', limit: 'messages', handler: 'list' },
    { method: 'get', path: '/events/stream', limit: 'messages', handler: 'stream' },
    // A WebSocket upgrade arrives here too (http/upgrade.ts): the same middleware, then the upgrade.
    {
      method: 'get',
      path: '/events/ws',
      auth: 'subprotocol',
      limit: 'messages',
      handler: 'socket',
      head: 'unlisted',
    },
    { method: 'get', path: '/events/brokers', limit: 'webhook', handler: 'getBrokers' },
    { method: 'put', path: '/events/brokers', limit: 'webhook', body: brokersBody, handler: 'putBrokers' },
  ],
  handlers: (s) => ({
    list: eventsRoute(s),
    stream: eventStreamRoute(s),
    socket: eventSocketRoute(s),
    getBrokers: getEventBrokersRoute(s),
    putBrokers: putEventBrokersRoute(s),
  }),
  paths: eventPaths,
  schemas: eventLogSchemas,
});

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

/**
 * GET /events/stream: the device's events as Server-Sent Events (events/event-streams.ts): after
 * the `Last-Event-ID` header (or `after`, for clients that cannot set headers) every event once,
 * in order, then live; without either, live from now. Refused with 429 before streaming when the
 * token already holds EVENT_STREAMS_PER_TOKEN streams in this process.
 */
export function eventStreamRoute(s: ApiServices): RequestHandler {
  return async (req, res) => {
    const { deviceId, tokenHash } = authOf(res);
    const q = parse(eventStreamQuerySchema, req.query);
    const header = req.get('last-event-id');
    if (header !== undefined && !EVENT_CURSOR_PATTERN.test(header))
      throw ApiError.invalid([
        { path: ['Last-Event-ID'], message: '"Last-Event-ID" must be the id of an event this stream sent' },
      ]);
    // The header is what a reconnecting EventSource sends: it is newer than the URL's `after`.
    const after = header ?? q.after;
    if (!s.eventStreams.canOpen(tokenHash)) throw new ApiError(429, ERRORS.tooManyEventStreams);
    // HEAD: the headers a stream would have, no stream.
    if (req.method === 'HEAD') {
      res.status(200).type('text/event-stream').end();
      return;
    }
    await s.eventStreams.open(new SseOutput(res), {
      key: tokenHash,
      devices: { one: deviceId },
      ...(after ? { after } : {}),
      ...(q.types ? { types: eventTypeList(q.types) } : {}),
    });
  };
}

/**
 * GET /events/brokers: the device's broker settings, one per transport (`rabbitmq`, `nats`):
 * whether the notifier publishes its events there and which types (all when `events` is absent).
 * A transport the device never set is on for every event (the default).
 */
export function getEventBrokersRoute(s: Pick<ApiServices, 'brokerSettings'>): RequestHandler {
  return async (req, res) => {
    const { deviceId } = authOf(res);
    parse(emptyQuerySchema, req.query);
    res.status(200).json({ success: true, data: await s.brokerSettings.get(deviceId) });
  };
}

/**
 * PUT /events/brokers: sets the given transports' settings (the others keep theirs). Only on/off
 * and event types: where the brokers are is the operator's setting (EVENTS_RABBITMQ_URL,
 * EVENTS_NATS_URL), never a device's, so no token can point the gateway at a host of its choosing.
 */
export function putEventBrokersRoute(s: Pick<ApiServices, 'brokerSettings'>): RequestHandler {
  return async (req, res) => {
    const { deviceId } = authOf(res);
    parse(emptyQuerySchema, req.query);
    const body = parse(brokerSettingsBodySchema, req.body ?? {});
    res.status(200).json({ success: true, data: await s.brokerSettings.set(deviceId, body) });
  };
}
