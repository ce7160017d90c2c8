/**
 * How a failed send settles its message: failed for good (the job too, no retry), or left for
 * the retry, and marked failed when the job will not run again.
 */
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { serializeError, type Logger } from '@mgw/common';
import {
  FAILURE_REASONS,
  type FailureReason,
  type Metrics,
  type SendJobData,
  type SendJobResult,
} from '@mgw/contracts';
import { MediaStoreUnavailableError, type ContentStore, type MessageStore } from '@mgw/store';
import { isFailureReason, RetryableSendError, toPermanent } from './send-errors.js';
import { attemptTraceparent } from './send-spans.js';

export interface SendFailureDeps {
  messages: MessageStore;
  contents: ContentStore;
  metrics: Metrics;
  logger: Logger;
  /** Set once the device was logged out: every failure is then the logout's. */
  retiredReason: () => FailureReason | undefined;
}

/**
 * A failed attempt; answers what to throw to BullMQ. A permanent failure fails the message and
 * the job (no retry); the last attempt of any other failure marks the message failed; the rest
 * are retried. A job moved back to the queue (DelayedError) is no failure.
 */
export async function failedAttempt(
  job: Job<SendJobData, SendJobResult>,
  err: unknown,
  deps: SendFailureDeps,
) {
  if (err instanceof DelayedError) return err;
  const data = job.data;
  const permanent = toPermanent(err, deps.retiredReason());
  if (permanent) {
    if (isAttachmentReason(permanent.reason)) {
      await deps.contents.rememberAttachmentError(data.deviceId, data.contentId, permanent.reason);
    }
    if (await deps.messages.markFailed(data, permanent.reason, undefined, attemptTraceparent()))
      deps.metrics.messages.inc({ status: 'failed' });
    return new UnrecoverableError(permanent.reason);
  }
  const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  // The media store away on every attempt says so, as does a failure that names its reason (a
  // cloud device's rate limits); anything else is `send_failed`.
  const reason =
    err instanceof MediaStoreUnavailableError
      ? FAILURE_REASONS.mediaStoreUnavailable
      : err instanceof RetryableSendError
        ? err.reason
        : FAILURE_REASONS.sendFailed;
  // Marked here, before BullMQ moves the job, so a crash in between cannot leave it `queued`.
  if (last && (await deps.messages.markFailed(data, reason, undefined, attemptTraceparent()))) {
    deps.metrics.messages.inc({ status: 'failed' });
  }
  deps.logger.warn(last ? 'send failed on its last attempt' : 'send attempt failed; will retry', {
    messageId: data.messageId,
    attempt: job.attemptsMade + 1,
    err: serializeError(err),
  });
  return err;
}

/**
 * The worker's `failed` handler. A job that will not run again must leave its message settled
 * as `failed`: the processor marks it on its last attempt, but a job that stalled more than
 * `maxStalledCount` is failed by BullMQ without the processor running, so it is marked here too
 * (`markFailed` settles a message once: idempotent).
 */
export async function onSendJobFailed(
  job: Job<SendJobData, SendJobResult> | undefined,
  err: Error,
  deps: Pick<SendFailureDeps, 'messages' | 'metrics' | 'logger'>,
): Promise<void> {
  if (!job) return;
  const unrecoverable = err.name === 'UnrecoverableError';
  if (!unrecoverable && job.attemptsMade < (job.opts.attempts ?? 1)) {
    deps.metrics.jobsRetried.inc({ queue_type: 'send' });
    return;
  }
  const reason = unrecoverable && isFailureReason(err.message) ? err.message : FAILURE_REASONS.sendFailed;
  deps.metrics.jobsFailed.inc({ queue_type: 'send', reason });
  if (await deps.messages.markFailed(job.data, reason)) {
    deps.metrics.messages.inc({ status: 'failed' });
    deps.logger.warn('send job failed without its processor marking the record', {
      messageId: job.data.messageId,
      reason,
      err: serializeError(err),
    });
  }
}

const ATTACHMENT_REASONS = new Set<string>([
  FAILURE_REASONS.attachmentUnreachable,
  FAILURE_REASONS.attachmentTooLarge,
  FAILURE_REASONS.attachmentUrlNotAllowed,
  FAILURE_REASONS.mediaGone,
]);
function isAttachmentReason(reason: string): boolean {
  return ATTACHMENT_REASONS.has(reason);
}
