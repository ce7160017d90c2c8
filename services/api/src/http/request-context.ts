import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { logDirect, traceContext, type Logger } from '@mgw/common';
import { endRequestSpan, requestSpanIds, startRequestSpan } from './request-span.js';

declare module 'express-serve-static-core' {
  interface Request {
    /** Child logger carrying this request's id. */
    log: Logger;
    requestId: string;
  }
}

const QUIET_ROUTES = new Set(['/healthz', '/readyz']);
const CLIENT_REQUEST_ID = /^[\w.:@-]{1,128}$/;

/**
 * The route template of a request (`/api/messenger/v1/messages/:id`), never the raw URL: ids and
 * `?token=` must not reach logs or metric labels. Requests that matched no route are `unmatched`.
 */
export function routeTemplate(req: Request): string {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? `${req.baseUrl}${path}` : 'unmatched';
}

/** What else happens to every request, in the same middleware (one layer, one `finish` listener). */
export interface RequestContextOptions {
  /** Headers every response carries, set first (`securityHeaders`). */
  headers?: (res: Response) => void;
  /** Once the response is done, after its access line (`httpMetrics`). */
  finished?: (req: Request, res: Response, durationMs: number) => void;
}

/**
 * Gives every request an id (the client's `X-Request-Id` when it is sane, else a new one), echoes
 * it back, attaches a child logger, and writes one access-log line when the response is done.
 */
export function requestContext(logger: Logger, opts: RequestContextOptions = {}): RequestHandler {
  const installed = new WeakSet<object>();
  const { headers, finished } = opts;
  return (req, res, next) => {
    headers?.(res);
    const given = req.get('x-request-id');
    const requestId = given && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
    req.requestId = requestId;
    const ctx = req as unknown as LogContext;
    ctx[BASE_LOGGER] = logger;
    // `req.log` is a getter of the app's request prototype (defined once, not per request).
    const proto = Object.getPrototypeOf(req) as object;
    if (!installed.has(proto)) {
      installed.add(proto);
      Object.defineProperty(proto, 'log', { configurable: true, get: lazyChildLogger });
    }
    res.setHeader('X-Request-Id', requestId);
    // With tracing on: the request's context (its span when sampled, continuing the caller's
    // traceparent), its handlers inside.
    const traced = startRequestSpan(req);
    const started = process.hrtime.bigint();
    // A response finishes once: a plain listener (no `once` wrapper) on an object that goes with it.
    res.on('finish', () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const route = routeTemplate(req);
      // Probes and scrapes arrive every few seconds from every replica: keep them out of info logs.
      const level = QUIET_ROUTES.has(route) && res.statusCode < 400 ? 'debug' : 'info';
      // The line a child logger would write (`requestId` is its only field), written directly.
      logDirect(logger, level, 'request', {
        requestId,
        method: req.method,
        route,
        status: res.statusCode,
        durationMs: Math.round(durationMs * 10) / 10,
        ...requestSpanIds(traced?.span),
      });
      if (traced?.span) endRequestSpan(traced.span, res, route);
      // In a sampled request's context: the latency histogram's exemplar is its trace.
      if (traced?.span && finished) traceContext.with(traced.context, () => finished(req, res, durationMs));
      else finished?.(req, res, durationMs);
    });
    if (traced) traceContext.with(traced.context, next);
    else next();
  };
}

const BASE_LOGGER = Symbol('base logger');
const CHILD_LOGGER = Symbol('child logger');
interface LogContext {
  requestId: string;
  [BASE_LOGGER]: Logger;
  [CHILD_LOGGER]?: Logger;
}

/** Most requests never log beyond their access line: the child logger is made on first use. */
function lazyChildLogger(this: LogContext): Logger {
  return (this[CHILD_LOGGER] ??= this[BASE_LOGGER].child({ requestId: this.requestId }));
}
