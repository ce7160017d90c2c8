import { createHmac, randomBytes, randomFillSync } from 'node:crypto';
import {
  context,
  createContextKey,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type TextMapPropagator,
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
/**
 * The W3C trace-context propagator our own carriers use (a job's, a record's, an event's
 * `traceparent`, a request's header): the global one is the SDK's composite (`OTEL_PROPAGATORS`,
 * trace context and baggage by default), which costs a baggage pass per call and has no baggage
 * of ours to carry.
 */
let w3c: TextMapPropagator | undefined;
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
  hashed.clear();
  const { NodeSDK, core } = await import('@opentelemetry/sdk-node');
  if (sdk) return undefined;
  w3c = new core.W3CTraceContextPropagator();
  const started = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME || `mgw-${o.service}`,
    idGenerator: pooledIds(),
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
  w3c!.inject(ctx, carrier, defaultTextMapSetter);
  return carrier.traceparent;
}

/** The context a `traceparent` (from a header, a job, a record or an event) continues. */
export function contextOf(parent: string | undefined, base: Context = ROOT_CONTEXT): Context {
  if (!parent || !sdk) return base;
  return w3c!.extract(base, { traceparent: parent }, defaultTextMapGetter);
}

const ACCEPT_SPAN = createContextKey('mgw.accept-span');

/**
 * `ctx` with `span` (a request's) standing for the first accept made under it: a request that
 * accepts messages is their accept, and one span fewer per message is most of what a traced
 * `POST /send` costs beyond its work (`npm run bench -- tracing-accept`).
 */
export function withAcceptSpan(ctx: Context, span: Span): Context {
  return ctx.setValue(ACCEPT_SPAN, { span, taken: false });
}

/** The span the active context's first accept records itself on (once); undefined after, or outside a request. */
export function takeAcceptSpan(ctx: Context = context.active()): Span | undefined {
  const holder = ctx.getValue(ACCEPT_SPAN) as { span: Span; taken: boolean } | undefined;
  if (!holder || holder.taken) return undefined;
  holder.taken = true;
  return holder.span;
}

/** `trace_id` and `span_id` of the active span, for a log line (undefined without one). */
export function activeSpanIds(): { trace_id: string; span_id: string } | undefined {
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const sc = span.spanContext();
  return trace.isSpanContextValid(sc) ? { trace_id: sc.traceId, span_id: sc.spanId } : undefined;
}

/**
 * Span and trace ids cut from a pool of random bytes refilled 8 KiB at a time: the SDK's own
 * generator draws `Math.random()` four bytes at a time into a shared buffer, a fifth of a span's
 * cost here (`npm run bench -- tracing`). The ids stay random (the CSPRNG) and never all zero.
 */
export function pooledIds(poolBytes = 8192): { generateTraceId(): string; generateSpanId(): string } {
  const pool = Buffer.allocUnsafe(poolBytes);
  let at = poolBytes;
  const take = (n: number): string => {
    for (;;) {
      if (at + n > poolBytes) {
        randomFillSync(pool);
        at = 0;
      }
      const start = at;
      at += n;
      // An all-zero id is invalid in W3C trace context: draw again (a 2^-64 event at most).
      for (let i = start; i < start + n; i++)
        if (pool[i] !== 0) return pool.toString('hex', start, start + n);
    }
  };
  return { generateTraceId: () => take(16), generateSpanId: () => take(8) };
}

/** Recipients hashed lately (a message's attempt, its receipts): the HMAC once per number, not per span. */
const hashed = new Map<string, string>();
const HASHED_MAX = 4096;

/** A recipient's number as spans may carry it: itself when the operator opted in, else a keyed hash. */
export function recipientAttribute(phone: string): string {
  if (recordRecipients) return phone;
  let h = hashed.get(phone);
  if (h === undefined) {
    h = createHmac('sha256', recipientKey).update(phone).digest('hex').slice(0, 16);
    // Bounded: past the cap the oldest entry goes (a Map keeps insertion order).
    if (hashed.size >= HASHED_MAX) hashed.delete(hashed.keys().next().value!);
    hashed.set(phone, h);
  }
  return h;
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
