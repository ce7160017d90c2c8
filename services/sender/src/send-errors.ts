import type { FailureReason } from '@mgw/contracts';

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
