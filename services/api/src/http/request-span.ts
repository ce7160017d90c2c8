import type { Request, Response } from 'express';
import {
  SpanKind,
  SpanStatusCode,
  startTraceSpan,
  tracer,
  tracingOn,
  withAcceptSpan,
  type Context,
  type Span,
} from '@mgw/common';

const api = tracer('api');
/** Probes and scrapes, every few seconds from every replica: no trace of their own. */
const UNTRACED = /^\/(healthz|readyz|metrics)$/;

/**
 * A request's context and, when its trace is sampled, its server span (a request not sampled has
 * none: its context only carries the trace's decision to what it hands on).
 */
export interface RequestSpan {
  context: Context;
  span?: Span;
}

/**
 * The request's span (tracing on only): a child of the caller's W3C `traceparent` when it sent a
 * valid one, else the root of a new trace; sampled first, built only then. Named and ended by
 * `endRequestSpan` once the route is known. Nothing of the URL beyond the route template, no
 * header and no body goes into it.
 */
export function startRequestSpan(req: Request): RequestSpan | undefined {
  if (!tracingOn() || UNTRACED.test(req.path)) return undefined;
  const started = startTraceSpan(
    api,
    req.method,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method } },
    req.get('traceparent'),
  );
  if (!started?.span) return started;
  // A request that accepts messages (POST /send, /otp, …) is their accept: no span of its own.
  return { span: started.span, context: withAcceptSpan(started.context, started.span) };
}

/** Names the span by its route (`POST /api/messenger/v1/send`) and ends it with the status. */
export function endRequestSpan(span: Span, res: Response, route: string): void {
  span.updateName(`${(res.req as Request).method} ${route}`);
  span.setAttributes({ 'http.route': route, 'http.response.status_code': res.statusCode });
  if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** `trace_id` and `span_id` of a request's span (a sampled one), for its access line. */
export function requestSpanIds(span: Span | undefined): { trace_id: string; span_id: string } | undefined {
  if (!span) return undefined;
  const sc = span.spanContext();
  return { trace_id: sc.traceId, span_id: sc.spanId };
}
