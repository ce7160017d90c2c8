import { context, trace, type Attributes, type Context, type TimeInput } from '@opentelemetry/api';
import type { Span, Telemetry } from 'bullmq';
import { BullMQOtel, BullMQOTelSpan } from 'bullmq-otel';
import {
  maskNumbers,
  messageTrace,
  NOT_SAMPLED,
  NOT_SAMPLED_CONTEXT,
  sampledUnder,
  tracingOn,
} from '@mgw/common';

/**
 * BullMQ's telemetry interface (bullmq-otel) for the send queues, or undefined with tracing off
 * (BullMQ then makes no span and stores no context). BullMQ carries the trace in the job (`tm`):
 * the API puts the accept's context there (`jobTraceOptions`), a worker's `process` span continues
 * it, and a failed attempt's retry carries the failure's, so every attempt of a message is one
 * more span of its trace. A message not sampled carries the plain flag instead (`NOT_SAMPLED`):
 * its job is worked in the one context of work not sampled (`NOT_SAMPLED_CONTEXT`), with no parse,
 * no span, no context made and, on a retry, the flag written back as it came. Only these spans
 * are kept:
 * - a worker's polling (`getNextJob`, the stalled checks) every few seconds per device would be a
 *   trace of its own each — thousands a minute on an idle fleet — so they are not recorded;
 * - BullMQ's `job completed` event carries the job's result (the recipient's number): its
 *   attributes are dropped, and an exception's message has its numbers masked.
 */
export function queueTelemetry(): Telemetry | undefined {
  if (!tracingOn()) return undefined;
  const otel = new BullMQOtel({ tracerName: 'mgw-queue' });
  const contexts = otel.contextManager;
  const tracer = trace.getTracer('mgw-queue');
  return {
    contextManager: {
      getMetadata: (ctx) => (sampledUnder(ctx) === false ? NOT_SAMPLED : contexts.getMetadata(ctx)),
      fromMetadata: (active, metadata) =>
        metadata === NOT_SAMPLED ? NOT_SAMPLED_CONTEXT : contexts.fromMetadata(active, metadata),
      with: (ctx, fn) => contexts.with(ctx, fn),
      active: () => contexts.active(),
    },
    tracer: {
      startSpan(name, options, ctx) {
        const kept = KEPT.some((op) => name === op || name.startsWith(`${op} `));
        // A job whose trace is not sampled: nothing built, its context handed on as it came.
        if (!kept || sampledUnder(ctx ?? context.active()) === false) return UNRECORDED;
        return new QuietSpan(tracer.startSpan(name, options, ctx));
      },
    },
  };
}

/** The operations whose spans a message's trace needs: its attempts, their outcomes. */
const KEPT = ['process', 'add', 'addBulk', 'moveToFailed', 'moveToDelayed', 'retryJob'];

/** BullMQ's span, without a job's result (the recipient) and with numbers masked in the rest. */
class QuietSpan extends BullMQOTelSpan {
  override setAttribute(key: string, value: unknown): void {
    this.setAttributes({ [key]: value as never });
  }
  override setAttributes(attributes: Attributes): void {
    const kept: Attributes = {};
    for (const [k, v] of Object.entries(attributes)) {
      if (k === 'bullmq.job.result') continue;
      kept[k] = typeof v === 'string' ? maskNumbers(v) : v;
    }
    super.setAttributes(kept);
  }
  override addEvent(name: string, _attributes?: Attributes, time?: TimeInput): void {
    super.addEvent(name, undefined, time);
  }
  override recordException(exception: unknown, time?: TimeInput): void {
    const e = exception instanceof Error ? exception : new Error(String(exception));
    super.recordException({ name: e.name, message: maskNumbers(e.message) } as never, time);
  }
}

/**
 * The span of an operation not kept (a poll, a completion) or of a trace not sampled: nothing to
 * record, so nothing is done — BullMQ calls it around every job it fetches and completes. Its
 * context is the caller's (for a job not sampled, the job's own, so its decision is handed on).
 */
const UNRECORDED: Span = {
  setSpanOnContext: (ctx: Context) => ctx,
  setAttribute: () => undefined,
  setAttributes: () => undefined,
  addEvent: () => undefined,
  recordException: () => undefined,
  end: () => undefined,
};

/**
 * The job options that carry a message's trace (`traceparent`: the accept's, as `messageTrace`
 * gives it; else the active context's) to the worker that takes the job, in BullMQ's own format
 * (its `telemetry.metadata`, what bullmq-otel's context manager reads): a sampled span's
 * `{"traceparent":…}`, or the plain flag `NOT_SAMPLED` as it is; none with tracing off or no
 * decision made.
 */
export function jobTraceOptions(traceparent: string | undefined = messageTrace()): {
  telemetry?: { metadata: string };
} {
  if (!traceparent || !tracingOn()) return {};
  if (traceparent === NOT_SAMPLED) return NOT_SAMPLED_JOB;
  return { telemetry: { metadata: JSON.stringify({ traceparent }) } };
}

/** The options of every job not sampled: one object, never changed. */
const NOT_SAMPLED_JOB = Object.freeze({ telemetry: Object.freeze({ metadata: NOT_SAMPLED }) });
