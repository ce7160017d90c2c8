import { createHmac, randomBytes } from 'node:crypto';
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { NodeSDK } from '@opentelemetry/sdk-node';

/**
 * OpenTelemetry traces (docs/monitoring.md, "Traces"). Off unless an OTLP endpoint is set
 * (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`); everything else is the
 * SDK's own reading of the standard variables: `OTEL_EXPORTER_OTLP_PROTOCOL` (http/protobuf, the
 * default, or http/json), `OTEL_TRACES_SAMPLER` and `_ARG`, `OTEL_RESOURCE_ATTRIBUTES`,
 * `OTEL_SERVICE_NAME` (else `mgw-<service>`), `OTEL_SDK_DISABLED`. Only traces: metrics stay
 * Prometheus's and logs stdout's. No automatic instrumentation: the spans are the ones a message
 * makes (an http or ioredis span per request or command would be noise at this rate, and ESM
 * instrumentation needs a loader hook in every process).
 *
 * With tracing off, every helper here is a no-op on the API's no-op tracer: nothing is recorded,
 * nothing is propagated, and `traceparent()` is undefined (a job or event carries nothing).
 */

let sdk: NodeSDK | undefined;
let recordRecipients = false;
let recipientKey: Buffer = randomBytes(32);

/** True when `env` asks for traces to be exported. */
export function tracingWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  if (String(env.OTEL_SDK_DISABLED ?? '').toLowerCase() === 'true') return false;
  if ((env.OTEL_TRACES_EXPORTER ?? '').split(',').some((e) => e.trim() === 'none')) return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** True once `startTracing` started the SDK in this process. */
export function tracingOn(): boolean {
  return sdk !== undefined;
}

export interface TracingOptions {
  /** `mgw-<service>` is the default `service.name`. */
  service: string;
  /**
   * A secret recipients are hashed with (HMAC-SHA256) when `OTEL_RECORD_RECIPIENTS` is not true:
   * the same number hashes the same in every service of an install (a plain hash of a phone number
   * is reversed by trying them all). Random per process when absent.
   */
  recipientKey?: Buffer;
  env?: NodeJS.ProcessEnv;
}

/**
 * Starts the SDK when `tracingWanted()` (once per process: the all-in-one process starts it for
 * its parts). Returns the flush-and-stop to run at shutdown, or undefined when tracing is off. The
 * SDK (its exporters and their dependencies) is only loaded then: a process without traces does
 * not pay for its modules.
 */
export async function startTracing(o: TracingOptions): Promise<(() => Promise<void>) | undefined> {
  const env = o.env ?? process.env;
  if (sdk || !tracingWanted(env)) return undefined;
  recordRecipients = String(env.OTEL_RECORD_RECIPIENTS ?? '').toLowerCase() === 'true';
  if (o.recipientKey) recipientKey = o.recipientKey;
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  if (sdk) return undefined;
  const started = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME || `mgw-${o.service}`,
    instrumentations: [],
    metricReaders: [],
    logRecordProcessors: [],
  });
  started.start();
  sdk = started;
  return async () => {
    if (sdk !== started) return;
    sdk = undefined;
    await started.shutdown();
  };
}

/** The tracer of one part of the gateway (its instrumentation scope: `mgw-api`, `mgw-sender`, …). */
export function tracer(service: string): Tracer {
  return trace.getTracer(`mgw-${service}`);
}

/** The W3C `traceparent` of `ctx` (the active context by default), when it holds a sampled span. */
export function traceparent(ctx: Context = context.active()): string | undefined {
  if (!sdk) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier.traceparent;
}

/** The context a `traceparent` (from a header, a job, a record or an event) continues. */
export function contextOf(parent: string | undefined, base: Context = ROOT_CONTEXT): Context {
  if (!parent || !sdk) return base;
  return propagation.extract(base, { traceparent: parent });
}

/** `trace_id` and `span_id` of the active span, for a log line (undefined without one). */
export function activeSpanIds(): { trace_id: string; span_id: string } | undefined {
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const sc = span.spanContext();
  return trace.isSpanContextValid(sc) ? { trace_id: sc.traceId, span_id: sc.spanId } : undefined;
}

/** A recipient's number as spans may carry it: itself when the operator opted in, else a keyed hash. */
export function recipientAttribute(phone: string): string {
  if (recordRecipients) return phone;
  return createHmac('sha256', recipientKey).update(phone).digest('hex').slice(0, 16);
}

/** Digit runs that could be a number (a JID, a phone) masked: error messages go into spans. */
export function maskNumbers(text: string): string {
  return text.replace(/\+?\d{6,}/g, '<number>');
}

/** Ends `span` as failed by `err`, its message masked (never a number, text or token). */
export function failSpan(span: Span, err: unknown): void {
  const e = err instanceof Error ? err : new Error(String(err));
  span.recordException({ name: e.name, message: maskNumbers(e.message) });
  span.setStatus({ code: SpanStatusCode.ERROR, message: maskNumbers(e.message).slice(0, 200) });
}

/**
 * Runs `fn` in a new span (a child of `parent`, else of the active context) that ends with it;
 * a throw marks it failed. With tracing off, `fn` runs with a non-recording span.
 */
export async function inSpan<T>(
  t: Tracer,
  name: string,
  o: { attributes?: Attributes; kind?: SpanKind; parent?: Context; links?: Link[]; startTime?: number },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = o.parent ?? context.active();
  const span = t.startSpan(
    name,
    { kind: o.kind ?? SpanKind.INTERNAL, attributes: o.attributes, links: o.links, startTime: o.startTime },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** A span already over (its start and end known after the fact: a wait, a late receipt). */
export function recordSpan(
  t: Tracer,
  name: string,
  o: { parent: Context; startTime: number; endTime?: number; attributes?: Attributes; links?: Link[] },
): void {
  if (!sdk) return;
  const span = t.startSpan(
    name,
    { attributes: o.attributes, links: o.links, startTime: o.startTime },
    o.parent,
  );
  span.end(o.endTime);
}

export { SpanKind, SpanStatusCode, context as traceContext, trace as traceApi, type Context, type Span };
