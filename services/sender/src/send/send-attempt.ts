/**
 * The end of a send attempt that did not send its message: whether its send began (a frame of it
 * may have reached WhatsApp) decides whether the message may still move to another device of its
 * pool, be expired or be failed without doubt (docs/architecture.md, "When a send began").
 */
import { serializeError, type Logger } from '@mgw/common';
import { FAILURE_REASONS, type Metrics, type SendJobData } from '@mgw/contracts';
import type { SendAttempt } from '@mgw/messenger';
import type { MessageStore } from '@mgw/store';
import { PermanentSendError } from './send-errors.js';

/** How long a retired device's send in flight is given to end, so that its attempt's end is known. */
export const RETIRED_SEND_SETTLE_MS = 3_000;

/**
 * Records how the failed attempt claimed at `claimedAt` ended (MessageStore.endAttempt). Not
 * recorded (Redis away), the claim stays and the next claim counts the send as begun: the safe
 * side (the message never moves).
 */
export async function endAttempt(
  data: SendJobData,
  claimedAt: number,
  attempt: SendAttempt,
  deps: { messages: MessageStore; metrics: Metrics; logger: Logger },
): Promise<void> {
  deps.metrics.sendAttemptsEnded.inc({ began: attempt.began ? 'true' : 'false' });
  await deps.messages.endAttempt(data, claimedAt, attempt.began).catch((err: unknown) =>
    deps.logger.warn('end of a send attempt not recorded', {
      messageId: data.messageId,
      began: attempt.began,
      err: serializeError(err),
    }),
  );
}

/**
 * Stops waiting for `work` when the device is retired: a socket that was logged out can hold a
 * send for a minute before Baileys gives up, and those messages must fail with the logout's
 * reason instead. The send is first given RETIRED_SEND_SETTLE_MS to end — the closing socket
 * usually ends it at once — so that `attempt` tells whether it began, and a send WhatsApp
 * acknowledged meanwhile counts as sent, not failed. One still running then may write yet: it
 * counts as begun. The abandoned send settles on its own (its rejection is swallowed).
 */
export async function abortable<T>(work: Promise<T>, attempt: SendAttempt, signal: AbortSignal): Promise<T> {
  work.catch(() => undefined);
  if (!signal.aborted) {
    let onAbort = (): void => undefined;
    const aborted = new Promise<'aborted'>((resolve) => {
      onAbort = () => resolve('aborted');
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const first = await Promise.race([work.then(settledTag, settledTag), aborted]);
      if (first === 'settled') return await work;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    work.then(
      () => 'sent' as const,
      () => 'failed' as const,
    ),
    new Promise<'running'>(
      (resolve) => (timer = setTimeout(() => resolve('running'), RETIRED_SEND_SETTLE_MS)),
    ),
  ]).finally(() => clearTimeout(timer));
  if (outcome === 'sent') return work;
  if (outcome === 'running') attempt.began = true;
  throw new PermanentSendError(FAILURE_REASONS.loggedOut, 'the device was logged out');
}

const settledTag = () => 'settled' as const;
