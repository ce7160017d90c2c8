import type { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import type { Request, RequestHandler, Response } from 'express';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  ERRORS,
  EVENT_CURSOR_PATTERN,
  eventStreamQuerySchema,
  eventTypeList,
  eventsQuerySchema,
  brokerSettingsBodySchema,
  emptyQuerySchema,
} from '@mgw/contracts';
import type { LoggedEvent } from '@mgw/store';
import { FIELD_ALLOWANCE, feature, type BodySpec } from '../../http/route-table.js';
import { eventLogSchemas, eventOperations, eventAdminOperations, eventAdminSchemas } from './openapi.js';
import type { Uses } from '../../api-services.js';
import { ApiError } from '../../http/api-error.js';
import { authOf } from '../../http/auth.js';
import { deviceIdOf } from '../../http/route-helpers.js';
import { parse } from '../../http/validation.js';
import { SseOutput } from '../../http/sse-output.js';
import { isUpgrade, takeUpgrade, upgraded } from '../../http/upgrade.js';
import { END_GRACE_MS, type CutReason, type StreamOutput } from './event-stream.js';
import { traceStreamed } from './event-spans.js';
import { eventAdminHandlers, eventAdminRoutes, type EventAdminName } from './admin.js';

/** PUT /events/brokers: the transports' on/off and event types (the webhook body's 8 KB and answer). */
const brokersBody: BodySpec = {
  json: { limitBytes: 8 * 1024, tooLargeError: ERRORS.webhookBodyTooLarge, maxValues: FIELD_ALLOWANCE },
};

/** The public routes' handlers (their OpenAPI operations are keyed by these names). */
export type EventName = 'list' | 'stream' | 'socket' | 'getBrokers' | 'putBrokers';

/**
 * The device's event log (docs/events.md): pulled (GET /events), streamed (SSE, WebSocket), and
 * whether it is published to the operator's brokers. The dashboard's live views and a device's
 * Events tab are its admin routes (admin.ts).
 */
export const events = feature<EventName, EventAdminName>({
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
    ...eventAdminRoutes,
  ],
  handlers: (s) => ({
    list: eventsRoute(s),
    stream: eventStreamRoute(s),
    socket: eventSocketRoute(s),
    getBrokers: getEventBrokersRoute(s),
    putBrokers: putEventBrokersRoute(s),
    // A device's log and broker settings, as the public routes read them, for the device of the path.
    ...eventAdminHandlers(s, {
      events: eventsRoute(s, deviceIdOf),
      brokers: getEventBrokersRoute(s, deviceIdOf),
    }),
  }),
  operations: eventOperations,
  schemas: eventLogSchemas,
  adminOperations: eventAdminOperations,
  adminSchemas: eventAdminSchemas,
});

/** Whose log a request reads: the token's device (public API) or a path's (admin API). */
export type DeviceOf = (req: Request, res: Response) => string;
const tokenDevice: DeviceOf = (_req, res) => authOf(res).deviceId;

/**
 * GET /events: the device's events after `after` (its event log, see @mgw/store's
 * events/event-log.ts), oldest first, a page at a time: every event, whether the webhook wants it
 * or not, kept for EVENT_LOG_RETENTION_HOURS. A cursor older than the log holds answers from its
 * oldest event with `truncated: true`. The device's log is trimmed to the window first (cheap: only
 * whole expired stream nodes go), so a device read by polling keeps no more than its window.
 */
export function eventsRoute(s: Uses<'eventLog'>, deviceOf: DeviceOf = tokenDevice): RequestHandler {
  return async (req, res) => {
    const deviceId = deviceOf(req, res);
    const q = parse(eventsQuerySchema, req.query);
    await s.eventLog.trim([deviceId]);
    const data = await s.eventLog.read(deviceId, {
      limit: q.limit,
      ...(q.after ? { after: q.after } : {}),
      ...(q.types ? { types: eventTypeList(q.types) } : {}),
    });
    traceStreamed(deviceId, data.events, 'pull');
    res.status(200).json({ success: true, data });
  };
}

/**
 * GET /events/stream: the device's events as Server-Sent Events (event-streams.ts): after
 * the `Last-Event-ID` header (or `after`, for clients that cannot set headers) every event once,
 * in order, then live; without either, live from now. Refused with 429 before streaming when the
 * token already holds EVENT_STREAMS_PER_TOKEN streams in this process.
 */
export function eventStreamRoute(s: Uses<'eventStreams'>): RequestHandler {
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
 * GET /events/brokers: the device's broker settings, one per transport (`rabbitmq`, `nats`,
 * `sqs`): whether the notifier publishes its events there and which types (all when `events` is
 * absent). A transport the device never set has its default: on for every event, off for SQS
 * (opt-in; `defaultBrokerSetting`).
 */
export function getEventBrokersRoute(
  s: Uses<'brokerSettings'>,
  deviceOf: DeviceOf = tokenDevice,
): RequestHandler {
  return async (req, res) => {
    const deviceId = deviceOf(req, res);
    parse(emptyQuerySchema, req.query);
    res.status(200).json({ success: true, data: await s.brokerSettings.get(deviceId) });
  };
}

/**
 * PUT /events/brokers: sets the given transports' settings (the others keep theirs). Only on/off
 * and event types: where the brokers are is the operator's setting (EVENTS_RABBITMQ_URL,
 * EVENTS_NATS_URL, EVENTS_SQS_QUEUE_URL), never a device's, so no token can point the gateway at
 * a host of its choosing.
 */
export function putEventBrokersRoute(s: Uses<'brokerSettings'>): RequestHandler {
  return async (req, res) => {
    const { deviceId } = authOf(res);
    parse(emptyQuerySchema, req.query);
    const body = parse(brokerSettingsBodySchema, req.body ?? {});
    res.status(200).json({ success: true, data: await s.brokerSettings.set(deviceId, body) });
  };
}

/**
 * GET /events/ws: the event stream (event-streams.ts) over a WebSocket. The same log, the
 * same resume (`?after=<cursor>`), type filter, per-token limit (one count with SSE), backpressure
 * and shutdown as GET /events/stream; each event is one JSON text frame
 * `{"type","cursor","id","timestamp","data"}` (`cursor` is what `after` takes).
 *
 * Authentication is the API token, as everywhere: `Authorization: Bearer` from a server client,
 * or — a browser's `WebSocket` cannot set headers — the token as a subprotocol next to
 * {@link PROTOCOL}: `new WebSocket(url, ['mgw.events.v1', 'mgw.bearer.' + token])` (the way
 * Kubernetes takes a bearer token on its WebSocket endpoints). The server answers with
 * `mgw.events.v1` only, never echoing the token, and the token stays out of the URL (which access
 * logs and proxies keep). Everything is checked before the upgrade: a refusal is the API's error
 * JSON with its HTTP status; after the upgrade the stream ends with a close code and a reason.
 */

/** The subprotocol of this stream; the server selects it when the client offers it. */
export const PROTOCOL = 'mgw.events.v1';
/** A subprotocol that carries the API token: `mgw.bearer.<token>`. */
export const BEARER_PROTOCOL_PREFIX = 'mgw.bearer.';

/** The close codes the server ends a stream with (the reason is the CutReason). */
export const CLOSE_CODES: Record<Exclude<CutReason, 'dead_peer'>, number> = {
  // 1001 Going Away: the process stops; reconnect (to another one) with `after`.
  shutdown: 1001,
  // 1008 Policy Violation: the client did not take what it was sent in time.
  slow_reader: 1008,
  // 1011 Internal Error: the log could not be read (Redis away).
  error: 1011,
};

/** What a client may send: nothing is expected; a small frame (a client's own ping) is ignored. */
const MAX_CLIENT_FRAME = 1024;
/** RFC 6455 §4.1: the key is the base64 of 16 bytes. */
const WS_KEY = /^[+/0-9A-Za-z]{22}==$/;

function offeredProtocols(header: string | undefined): string[] {
  return header
    ? header
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean)
    : [];
}

/**
 * Before `authenticate` on GET /events/ws: a token offered as a `mgw.bearer.<token>` subprotocol
 * is taken as the `Authorization` header (which wins when both are sent). Offering it without
 * `mgw.events.v1` is refused: a browser would fail a handshake whose answer selects no protocol.
 */
export const tokenFromSubprotocol: RequestHandler = (req, _res, next) => {
  const offered = offeredProtocols(req.get('sec-websocket-protocol'));
  const bearer = offered.find((p) => p.startsWith(BEARER_PROTOCOL_PREFIX));
  if (!bearer) return next();
  if (!offered.includes(PROTOCOL))
    return next(
      ApiError.invalid([
        {
          path: ['Sec-WebSocket-Protocol'],
          message: `"Sec-WebSocket-Protocol" must offer "${PROTOCOL}" with the token`,
        },
      ]),
    );
  if (!req.get('authorization'))
    req.headers.authorization = `Bearer ${bearer.slice(BEARER_PROTOCOL_PREFIX.length)}`;
  next();
};

/** A handshake `ws` would refuse with a bare 400: refused here with the error JSON instead. */
function handshakeProblem(headers: Record<string, string | string[] | undefined>): string | undefined {
  const key = headers['sec-websocket-key'];
  if (typeof key !== 'string' || !WS_KEY.test(key.trim()))
    return '"Sec-WebSocket-Key" is missing or malformed';
  if (headers['sec-websocket-version'] !== '13') return '"Sec-WebSocket-Version" must be 13';
  return undefined;
}

export function eventSocketRoute(s: Uses<'eventStreams'>): RequestHandler {
  const wss = new WebSocketServer({
    noServer: true,
    clientTracking: false,
    perMessageDeflate: false,
    maxPayload: MAX_CLIENT_FRAME,
    // Only ever our own protocol: the one that carries the token is never echoed.
    handleProtocols: (protocols) => (protocols.has(PROTOCOL) ? PROTOCOL : false),
  });
  return async (req, res) => {
    const { deviceId, tokenHash } = authOf(res);
    const q = parse(eventStreamQuerySchema, req.query);
    if (!isUpgrade(req) || req.get('upgrade')?.toLowerCase() !== 'websocket') {
      res.setHeader('Upgrade', 'websocket');
      res.setHeader('Connection', 'Upgrade');
      throw new ApiError(426, ERRORS.webSocketUpgradeRequired);
    }
    const problem = handshakeProblem(req.headers);
    if (problem) throw ApiError.invalid([{ path: [], message: problem }]);
    if (!s.eventStreams.canOpen(tokenHash)) throw new ApiError(429, ERRORS.tooManyEventStreams);
    const output = new SocketOutput(wss, req, () => upgraded(res));
    await s.eventStreams.open(output, {
      key: tokenHash,
      devices: { one: deviceId },
      ...(q.after ? { after: q.after } : {}),
      ...(q.types ? { types: eventTypeList(q.types) } : {}),
    });
  };
}

/** Each event's frame, by event: the sockets of a shared read send the same text. */
const SOCKET_FRAMES = new WeakMap<LoggedEvent, string>();

/**
 * A stream on a WebSocket. The upgrade itself waits for {@link begin} (the stream's cursor is
 * taken by then), so a client that sees the socket open gets every event from then on.
 * Backpressure is read on the socket under it (`bufferedAmount`, its `drain`); a ping every
 * keep-alive period, and a peer that answered none of the last one is cut (`dead_peer`).
 */
class SocketOutput implements StreamOutput {
  readonly transport = 'websocket';
  private readonly socket: Duplex;
  private ws: WebSocket | undefined;
  private alive = true;

  constructor(
    private readonly wss: WebSocketServer,
    private readonly req: Parameters<RequestHandler>[0],
    private readonly onUpgraded: () => void,
  ) {
    // `drain` and `close` come from the TCP socket itself: what `ws` writes is buffered there.
    this.socket = req.socket;
  }

  get emitter(): EventEmitter {
    return this.socket;
  }

  /**
   * The upgrade, once the stream's cursor is taken. Until then the socket stays the response's:
   * a failure to take the cursor is still answered as JSON (503) by the error middleware.
   */
  begin(): void {
    const taken = takeUpgrade(this.req);
    if (!taken || taken.socket.destroyed) return;
    this.wss.handleUpgrade(this.req, taken.socket, taken.head, (ws) => {
      this.ws = ws;
      ws.on('pong', () => (this.alive = true));
      // Any frame from the client shows it is there; its content means nothing to the stream.
      ws.on('message', () => (this.alive = true));
      ws.on('error', () => ws.terminate());
      this.onUpgraded();
    });
  }

  events(_deviceId: string, events: readonly LoggedEvent[]): void {
    for (const e of events) {
      // Encoded once for every socket that sends the same event (a read shared by SharedLogReads).
      let text = SOCKET_FRAMES.get(e);
      if (text === undefined) {
        text = JSON.stringify({
          type: e.type,
          cursor: e.cursor,
          id: e.id,
          timestamp: e.timestamp,
          data: e.data,
        });
        SOCKET_FRAMES.set(e, text);
      }
      if (this.ws?.readyState === 1) this.ws.send(text);
    }
  }

  truncated(_deviceId: string, after: string): void {
    this.send({ type: 'truncated', after });
  }

  keepAlive(): boolean {
    const ws = this.ws;
    if (!ws) return true;
    // A full socket: the stall cut watches it, and a ping would wait behind the data anyway.
    if (this.full()) return true;
    if (!this.alive) return false;
    this.alive = false;
    ws.ping();
    return true;
  }

  buffered(): number {
    return this.ws?.bufferedAmount ?? 0;
  }

  full(): boolean {
    return (this.socket as Duplex & { writableNeedDrain: boolean }).writableNeedDrain;
  }

  gone(): boolean {
    return this.socket.destroyed;
  }

  end(reason: CutReason): void {
    const ws = this.ws;
    if (!ws) {
      this.socket.destroy();
      return;
    }
    if (reason === 'dead_peer') {
      ws.terminate();
      return;
    }
    ws.close(CLOSE_CODES[reason], reason);
    // A peer that does not read never takes the close frame either: its socket goes.
    setTimeout(() => ws.terminate(), END_GRACE_MS).unref();
  }

  private send(frame: Record<string, unknown>): void {
    if (this.ws?.readyState === 1) this.ws.send(JSON.stringify(frame));
  }
}
