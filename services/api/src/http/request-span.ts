import type { Request, Response } from 'express';
import {
  SpanKind,
  SpanStatusCode,
  contextOf,
  traceApi,
  tracer,
  tracingOn,
  withAcceptSpan,
  type Context,
  type Span,
} from '@mgw/common';

const api = tracer('api');
/** Probes and scrapes, every few seconds from every replica: no trace of their own. */
const UNTRACED = /^\/(healthz|readyz|metrics)$/;

/** A request's server span, and the context its handlers run in. */
export interface RequestSpan {
  context: Context;
  span: Span;
}

/**
 * The request's span (tracing on only): a child of the caller's W3C `traceparent` when it sent a
 * valid one, else the root of a new trace. Named and ended by `endRequestSpan` once the route is
 * known. Nothing of the URL beyond the route template, no header and no body goes into it.
 */
export function startRequestSpan(req: Request): RequestSpan | undefined {
  if (!tracingOn() || UNTRACED.test(req.path)) return undefined;
  const given = req.get('traceparent');
  const parent = contextOf(given);
  const span = api.startSpan(
    req.method,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method } },
    parent,
  );
  // A request that accepts messages (POST /send, /otp, …) is their accept: no span of its own.
  return { span, context: withAcceptSpan(traceApi.setSpan(parent, span), span) };
}

/** Names the span by its route (`POST /api/messenger/v1/send`) and ends it with the status. */
export function endRequestSpan(rs: RequestSpan, res: Response, route: string): void {
  rs.span.updateName(`${(res.req as Request).method} ${route}`);
  rs.span.setAttributes({ 'http.route': route, 'http.response.status_code': res.statusCode });
  if (res.statusCode >= 500) rs.span.setStatus({ code: SpanStatusCode.ERROR });
  rs.span.end();
}

/** `trace_id` and `span_id` of a request's span, for its access line. */
export function requestSpanIds(
  rs: RequestSpan | undefined,
): { trace_id: string; span_id: string } | undefined {
  if (!rs) return undefined;
  const sc = rs.span.spanContext();
  return traceApi.isSpanContextValid(sc) ? { trace_id: sc.traceId, span_id: sc.spanId } : undefined;
}
