/**
 * A send job's spans (docs/monitoring.md, "Traces"). They are children of BullMQ's `process` span
 * of the attempt, itself a child of the API's accept (the trace the job carries): the queue wait,
 * the pacer's wait for the device's turn, the socket write up to WhatsApp's server ack; a held
 * message's reason is an event on the attempt. With tracing off, none of this records anything.
 */
import type { Job } from 'bullmq';
import {
  inSpan,
  messageTrace,
  recipientAttribute,
  recordSpan,
  sampledUnder,
  traceApi,
  traceContext,
  tracer,
  tracingOn,
} from '@mgw/common';
import type { SendJobData, SendJobResult } from '@mgw/contracts';

const sender = tracer('sender');

/**
 * The wait in the queue before this attempt's turn (from the enqueue, or a scheduled send's due
 * time), and the attempt's own attributes: the device, the kind, the recipient (hashed unless
 * `OTEL_RECORD_RECIPIENTS`).
 */
export function traceAttempt(job: Job<SendJobData, SendJobResult>): void {
  const attempt = traceApi.getActiveSpan();
  // Tracing off, or the message's trace not sampled: nothing is recorded, nothing built.
  if (!attempt?.isRecording()) return;
  const data = job.data;
  attempt.setAttributes({
    'mgw.device': data.deviceId,
    'mgw.message_id': data.messageId,
    'mgw.kind': data.kind,
    'mgw.recipient': recipientAttribute(data.to),
    'mgw.attempt': job.attemptsMade + 1,
  });
  if (job.attemptsMade > 0) return;
  recordSpan(sender, 'message.queue', {
    parent: traceContext.active(),
    startTime: Math.max(data.enqueuedAt, data.sendAt ?? 0),
    endTime: Date.now(),
  });
}

/** `fn` in a span of the attempt (`message.send`); just `fn` with tracing off. */
export function inAttemptSpan<T>(name: string, fn: () => Promise<T>): Promise<T> {
  return tracingOn() ? inSpan(sender, name, {}, fn) : fn();
}

/**
 * A wait of the attempt (`message.pace`: the device's turn, typing) as a span when it lasted a
 * millisecond or more: a device with pacing off waits for nothing, and a span of nothing would
 * only cost (most of a message's spans otherwise).
 */
export async function timedWait<T>(name: string, fn: () => Promise<T>): Promise<T> {
  if (sampledUnder(traceContext.active()) === false) return fn();
  const start = Date.now();
  try {
    return await fn();
  } finally {
    const end = Date.now();
    if (end - start >= 1)
      recordSpan(sender, name, { parent: traceContext.active(), startTime: start, endTime: end });
  }
}

/** A held message's reason, as an event of its attempt. */
export function traceHeld(reason: string, until: number): void {
  traceApi
    .getActiveSpan()
    ?.addEvent('message.held', { 'mgw.reason': reason, 'mgw.until': new Date(until).toISOString() });
}

/**
 * The attempt's trace, kept on the record: a sampled one's traceparent (its receipts and events
 * continue the trace), or the plain flag of a message not sampled (they make nothing of it).
 */
export function attemptTraceparent(): string | undefined {
  return messageTrace();
}
