import { FAILURE_REASONS, type FailureReason } from '@mgw/contracts';
import { ReplyTargetMissingError, ServerRejectedError } from '@mgw/messenger';

/** A failure that a retry cannot fix: the job fails at once and the record says why. */
export class PermanentSendError extends Error {
  override name = 'PermanentSendError';
  constructor(
    readonly reason: FailureReason,
    detail: string,
  ) {
    super(`${reason}: ${detail}`);
  }
}

/**
 * A passing failure the job's retry may fix (a rate limit, the platform's passing error), which
 * names the reason the message fails with once its attempts are spent.
 */
export class RetryableSendError extends Error {
  override name = 'RetryableSendError';
  constructor(
    readonly reason: FailureReason,
    detail: string,
  ) {
    super(`${reason}: ${detail}`);
  }
}

const FAILURE_REASON_VALUES = new Set<string>(Object.values(FAILURE_REASONS));
export function isFailureReason(s: string): s is FailureReason {
  return FAILURE_REASON_VALUES.has(s);
}
/** A stored failure reason, or `send_failed` for anything else. */
export function reasonOf(error: string | undefined): FailureReason {
  return error && isFailureReason(error) ? error : FAILURE_REASONS.sendFailed;
}

/** The failures a retry cannot fix, as the reason the message fails with; undefined: retry. */
export function toPermanent(
  err: unknown,
  retired: FailureReason | undefined,
): PermanentSendError | undefined {
  if (err instanceof PermanentSendError) return err;
  if (err instanceof ServerRejectedError) {
    return new PermanentSendError(FAILURE_REASONS.rejectedByServer, err.message);
  }
  if (err instanceof ReplyTargetMissingError) {
    return new PermanentSendError(FAILURE_REASONS.replyTargetNotFound, err.message);
  }
  // After a logout every failure is the logout's: retrying would only wait for a socket that is gone.
  if (retired) return new PermanentSendError(retired, 'the device was logged out');
  return undefined;
}
