import { createHmac, randomBytes, randomFillSync } from 'node:crypto';
import {
  context,
  createContextKey,
  defaultTextMapGetter,
  defaultTextMapSetter,
  INVALID_SPAN_CONTEXT,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanOptions,
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
/**
 * `OTEL_TRUST_CALLER_SAMPLING=true`: a caller's `traceparent` is the request's parent, and its
 * flags decide the sampling (parent-based samplers). Off (the default), a caller cannot choose what
 * this gateway records: its `traceparent` is only linked from a trace of our own, sampled by our
 * own rule (`startTraceSpan`, docs/monitoring.md "A caller's traceparent").
 */
let trustCallers = false;
/**
 * The sampling rule (`OTEL_TRACES_SAMPLER` and `_ARG`), the SDK's own: decided here first, before
 * any span, context or attribute is built for work that will not be recorded (issue 71).
 */
let sampling:
  | { parentBased: boolean; root: (traceId: string) => boolean; rootWords: (words: number) => boolean }
  | undefined;
/** A new trace's id, chosen (and its sampling decided) before the SDK starts its root span. */
let nextTraceId: string | undefined;
/** Trace and span ids (pooled from the CSPRNG), made when tracing starts. */
let ids: ReturnType<typeof pooledIds> | undefined;
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
  trustCallers = String(env.OTEL_TRUST_CALLER_SAMPLING ?? '').toLowerCase() === 'true';
  if (o.recipientKey) recipientKey = o.recipientKey;
  hashed.clear();
  const { NodeSDK, core, tracing } = await import('@opentelemetry/sdk-node');
  if (sdk) return undefined;
  w3c = new core.W3CTraceContextPropagator();
  const made = (ids = pooledIds());
  const rule = samplingRule(env);
  const root =
    rule.root === 'on'
      ? new tracing.AlwaysOnSampler()
      : rule.root === 'off'
        ? new tracing.AlwaysOffSampler()
        : new tracing.TraceIdRatioBasedSampler(rule.root);
  sampling = {
    parentBased: rule.parentBased,
    root: rootDecision(rule.root),
    rootWords: rootWordsDecision(rule.root),
  };
  const started = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME || `mgw-${o.service}`,
    sampler: rule.parentBased ? new tracing.ParentBasedSampler({ root }) : root,
    idGenerator: {
      generateTraceId: () => {
        const chosen = nextTraceId;
        nextTraceId = undefined;
        return chosen ?? made.generateTraceId();
      },
      generateSpanId: made.generateSpanId,
    },
    instrumentations: [],
    metricReaders: [],
    logRecordProcessors: [],
  });
  started.start();
  sdk = started;
  return async () => {
    if (sdk !== started) return;
    sdk = undefined;
    sampling = undefined;
    await started.shutdown();
  };
}

/**
 * `OTEL_TRACES_SAMPLER` and `_ARG` read as the SDK reads them (sdk-node's `createSamplerFromEnv`):
 * `parentbased_always_on` when unset or unknown, a ratio outside [0, 1] or not a number is 1.
 */
export function samplingRule(env: NodeJS.ProcessEnv): { parentBased: boolean; root: 'on' | 'off' | number } {
  const name = env.OTEL_TRACES_SAMPLER ?? '';
  const raw = (env.OTEL_TRACES_SAMPLER_ARG ?? '').trim();
  const arg = raw === '' ? NaN : Number(raw);
  const ratio = Number.isFinite(arg) && arg >= 0 && arg <= 1 ? arg : 1;
  switch (name) {
    case 'always_on':
      return { parentBased: false, root: 'on' };
    case 'always_off':
      return { parentBased: false, root: 'off' };
    case 'traceidratio':
      return { parentBased: false, root: ratio };
    case 'parentbased_always_off':
      return { parentBased: true, root: 'off' };
    case 'parentbased_traceidratio':
      return { parentBased: true, root: ratio };
    default:
      return { parentBased: true, root: 'on' };
  }
}

/**
 * A new trace's decision by its id, as the SDK's root samplers make it: `TraceIdRatioBasedSampler`'s
 * rule (the id's four 32-bit words XORed, below ratio × 2^32 − 1) without its validation and its
 * result object, for ids that are valid already (ours, or a `traceparent` the W3C parse accepted).
 * The SDK's sampler, asked again when the span is built, decides the same (tested against it).
 */
export function rootDecision(root: 'on' | 'off' | number): (traceId: string) => boolean {
  const decide = rootWordsDecision(root);
  return (traceId) => {
    let acc = 0;
    for (let i = 0; i < 32; i += 8) {
      let word = 0;
      for (let j = i; j < i + 8; j++) {
        const c = traceId.charCodeAt(j);
        word = (word << 4) | (c < 58 ? c - 48 : c < 71 ? c - 55 : c - 87);
      }
      acc = (acc ^ word) >>> 0;
    }
    return decide(acc);
  };
}

/**
 * The same decision from the id's four 32-bit words already XORed (an unsigned number): what
 * `pooledIds().newTraceId` decides on from the random bytes, before any string is made.
 */
export function rootWordsDecision(root: 'on' | 'off' | number): (words: number) => boolean {
  if (root === 'on') return () => true;
  if (root === 'off') return () => false;
  const bound = root >= 1 ? 0x100000000 : Math.floor(Math.max(0, root) * 0xffffffff);
  return (words) => words < bound;
}

/**
 * Whether a span begun under `ctx` would be recorded, decided as the SDK's sampler would without
 * building it: false with tracing off; undefined when `ctx` holds no span (a new trace, whose
 * decision depends on the id it gets).
 */
export function sampledUnder(ctx: Context): boolean | undefined {
  if (!sampling) return false;
  if (ctx.getValue(NOT_SAMPLED_KEY) === true) return false;
  const sc = trace.getSpanContext(ctx);
  // A context holds a valid span context or none: ours, or one the W3C parse accepted.
  if (!sc || sc.traceId === INVALID_SPAN_CONTEXT.traceId) return undefined;
  return sampling.parentBased ? (sc.traceFlags & TraceFlags.SAMPLED) !== 0 : sampling.root(sc.traceId);
}

/**
 * The span of a unit of work that may begin a trace (a request), the sampling decided first. Not
 * sampled (a ratio miss, a trusted caller's unsampled trace), no span is made: the context holds
 * only the trace's unsampled span context, so that what the work hands on (a job) carries the
 * decision and nothing downstream records it either. With tracing off: undefined.
 *
 * The caller's `traceparent` (`given`), when valid:
 * - trusted (`OTEL_TRUST_CALLER_SAMPLING=true`): the span is its child, and the sampler follows its
 *   flags (parent-based) or its trace id (`traceidratio`), as the SDK would;
 * - not trusted (the default): a new trace of our own, decided by our rule on our own id, whose
 *   span (if sampled) links to the caller's. Its flags are never obeyed: a client that sends
 *   `…-01` on every request cannot make the gateway record, store and export every message (nor
 *   pick trace ids its ratio keeps), and one that sends `…-00` cannot hide its requests.
 */
export function startTraceSpan(
  t: Tracer,
  name: string,
  options: SpanOptions,
  given: string | undefined,
): { context: Context; span?: Span } | undefined {
  if (!sampling) return undefined;
  const parent = trustCallers ? contextOf(given) : ROOT_CONTEXT;
  const decision = sampledUnder(parent);
  if (decision === undefined) {
    // Decided on the new id's random bytes: a hex id is made only for a trace that is kept.
    const traceId = ids!.newTraceId(sampling.rootWords);
    if (traceId === undefined) return NOT_SAMPLED_START;
    // The SDK's root span gets this id, and its sampler (the same rule) decides the same.
    nextTraceId = traceId;
  } else if (!decision) return NOT_SAMPLED_START;
  // Parsed only for a span that is recorded: an unsampled request pays nothing for the header.
  const link = trustCallers || !given ? undefined : trace.getSpanContext(contextOf(given));
  const span = t.startSpan(name, link ? { ...options, links: [{ context: link }] } : options, parent);
  nextTraceId = undefined;
  return { context: trace.setSpan(parent, span), span };
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

/**
 * A message's trace decision as its job, its record and its events carry it (`tm`, `tp`) when the
 * decision was "not sampled" (issue 81): a plain flag, not a `traceparent` with its sampled bit
 * clear. Whatever reads it gets {@link NOT_SAMPLED_CONTEXT} without a parse, and nothing downstream
 * (the sender's attempts, the receipts, the webhook, the brokers) builds a context, a span, ids or
 * a propagation carrier for the message. It cannot be taken for a `traceparent` (55 characters,
 * W3C's `version-traceid-spanid-flags`), and a reader that knows nothing of it (another build's
 * BullMQ context manager) parses it to no context.
 */
export const NOT_SAMPLED = '0';

const NOT_SAMPLED_KEY = createContextKey('mgw.not-sampled');
/**
 * The one context of all work not sampled: made once, entered as it is. It holds no span and no
 * ids, only the decision, which `sampledUnder` reads first; a context made from it (a value set on
 * it) keeps the decision.
 */
export const NOT_SAMPLED_CONTEXT: Context = ROOT_CONTEXT.setValue(NOT_SAMPLED_KEY, true);
/** What `startTraceSpan` returns for work not sampled: the same object every time. */
const NOT_SAMPLED_START = Object.freeze({ context: NOT_SAMPLED_CONTEXT });

/**
 * What a message's job, record or event keeps of the trace it is in (`ctx`, the active context by
 * default): the sampled span's `traceparent`, {@link NOT_SAMPLED} when the decision was not to
 * record it, nothing with tracing off or no decision made (a new trace then starts where it is read).
 */
export function messageTrace(ctx: Context = context.active()): string | undefined {
  if (!sdk) return undefined;
  return sampledUnder(ctx) === false ? NOT_SAMPLED : traceparent(ctx);
}

/**
 * The context a `traceparent` (from a header, a job, a record or an event) continues; for the
 * {@link NOT_SAMPLED} flag, the one context of work not sampled (nothing parsed, nothing made).
 */
export function contextOf(parent: string | undefined, base: Context = ROOT_CONTEXT): Context {
  if (!parent || !sdk) return base;
  if (parent === NOT_SAMPLED) return NOT_SAMPLED_CONTEXT;
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

/** `trace_id` and `span_id` of the active span when it is sampled, for a log line or an exemplar. */
export function activeSpanIds(): { trace_id: string; span_id: string } | undefined {
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const sc = span.spanContext();
  // A trace not sampled is nowhere to be found: no log line or exemplar points to it.
  return (sc.traceFlags & TraceFlags.SAMPLED) !== 0 && trace.isSpanContextValid(sc)
    ? { trace_id: sc.traceId, span_id: sc.spanId }
    : undefined;
}

/**
 * Span and trace ids cut from a pool of random bytes refilled 8 KiB at a time: the SDK's own
 * generator draws `Math.random()` four bytes at a time into a shared buffer, a fifth of a span's
 * cost here (`npm run bench -- tracing`). The ids stay random (the CSPRNG) and never all zero.
 */
export function pooledIds(poolBytes = 8192): {
  generateTraceId(): string;
  generateSpanId(): string;
  /**
   * A new trace's id when `keep` keeps it, decided on its four 32-bit words XORed (the ratio
   * rule's input, `rootWordsDecision`) before its hex is made; undefined (and no string made)
   * when not: most new traces at a low ratio.
   */
  newTraceId(keep: (words: number) => boolean): string | undefined;
} {
  const pool = Buffer.allocUnsafe(poolBytes);
  let at = poolBytes;
  /** The offset of `n` fresh bytes of the pool. */
  const draw = (n: number): number => {
    if (at + n > poolBytes) {
      randomFillSync(pool);
      at = 0;
    }
    at += n;
    return at - n;
  };
  const nonZero = (start: number, n: number): boolean => {
    for (let i = start; i < start + n; i++) if (pool[i] !== 0) return true;
    return false;
  };
  // An all-zero id is invalid in W3C trace context: draw again (a 2^-64 event at most).
  const take = (n: number): string => {
    for (;;) {
      const start = draw(n);
      if (nonZero(start, n)) return pool.toString('hex', start, start + n);
    }
  };
  return {
    generateTraceId: () => take(16),
    generateSpanId: () => take(8),
    newTraceId(keep) {
      for (;;) {
        const s = draw(16);
        const words =
          (pool.readUInt32BE(s) ^
            pool.readUInt32BE(s + 4) ^
            pool.readUInt32BE(s + 8) ^
            pool.readUInt32BE(s + 12)) >>>
          0;
        if (!keep(words)) return undefined;
        if (nonZero(s, 16)) return pool.toString('hex', s, s + 16);
      }
    },
  };
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

/** The span handed to work that is not recorded (tracing off, or its trace not sampled). */
const UNRECORDED_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * Runs `fn` in a new span (a child of `parent`, else of the active context) that ends with it;
 * a throw marks it failed. With tracing off, or under a trace that is not sampled, `fn` runs with
 * a span that records nothing.
 */
export async function inSpan<T>(
  t: Tracer,
  name: string,
  o: { attributes?: Attributes; kind?: SpanKind; parent?: Context; links?: Link[]; startTime?: number },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = o.parent ?? context.active();
  // Not to be recorded: no span is built; `fn` runs in its parent's context (which it hands on).
  if (sampledUnder(parent) === false)
    return o.parent && o.parent !== context.active()
      ? context.with(o.parent, () => fn(UNRECORDED_SPAN))
      : fn(UNRECORDED_SPAN);
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
  if (sampledUnder(o.parent) === false) return;
  const span = t.startSpan(
    name,
    { attributes: o.attributes, links: o.links, startTime: o.startTime },
    o.parent,
  );
  span.end(o.endTime);
}

export { SpanKind, SpanStatusCode, context as traceContext, trace as traceApi, type Context, type Span };
