import { DelayedError, type Job } from 'bullmq';
import { serializeError, type Logger } from '@mgw/common';
import type { HeldReason, Metrics, SendJobData, SendJobResult } from '@mgw/contracts';
import type { MessageStore } from '@mgw/store';
import type { SendGate } from './send-gate.js';
import { traceHeld } from './send-spans.js';

/**
 * How long a message of a paused batch waits before its sender looks at the batch again. A resume
 * wakes the batch's held messages at once (the API promotes their jobs); this only bounds the wait
 * of one whose wake-up was missed.
 */
export const LIST_PAUSE_RECHECK_MS = 60_000;

export interface HoldDeps {
  messages: MessageStore;
  gate: Pick<SendGate, 'batchStop'>;
  metrics: Metrics;
  logger: Logger;
}

/**
 * Back to the queue until `until` (ms) without using an attempt; the record stays `queued` and
 * shows `held: { reason, until }` (and its batch counts it in `counts.held`) until it goes on.
 * A hold after a failed attempt comes after that attempt recorded its end (send-attempt.ts):
 * whether a pooled message may move meanwhile is the attempt's to say, not the hold's.
 */
export async function holdMessage(
  job: Job<SendJobData, SendJobResult>,
  reason: HeldReason,
  until: number,
  deps: HoldDeps,
  token: string | undefined,
): Promise<never> {
  const at = Math.max(until, Date.now() + 100);
  traceHeld(reason, at);
  // The record's `held` only explains the wait: a failed write must not turn a hold into a retry.
  await deps.messages
    .hold(job.data, reason, at)
    .catch((err: unknown) => deps.logger.warn('hold not recorded', { err: serializeError(err) }));
  await job.moveToDelayed(at, token);
  throw new DelayedError();
}

/**
 * Holds a message of a paused batch (`batch_paused`) until the sender looks again. Returns when the
 * batch is no longer paused (a resume ran since it was read): the message goes on. A resume that
 * runs while the job moves to the delayed set may miss it in its wake-up, so the batch is read
 * once more after the move and the job promoted if it was resumed meanwhile: either the resume
 * finds the job delayed, or this read finds the batch resumed.
 */
export async function holdForPausedBatch(
  job: Job<SendJobData, SendJobResult>,
  deps: HoldDeps,
  token: string | undefined,
): Promise<void> {
  const at = Date.now() + LIST_PAUSE_RECHECK_MS;
  traceHeld('batch_paused', at);
  const held = await deps.messages.hold(job.data, 'batch_paused', at).catch(() => true);
  if (!held) return;
  deps.metrics.sendsHeld.inc({ reason: 'batch_paused' });
  await job.moveToDelayed(at, token);
  if ((await deps.gate.batchStop(job.data.batchId).catch(() => 'paused')) !== 'paused') {
    await job.promote().catch(() => undefined);
  }
  throw new DelayedError();
}
