import {
  ERRORS,
  FAILURE_REASONS,
  PRIORITY,
  renderOtp,
  type Metrics,
  type OtpBody,
  type SendJobData,
  type SendJobResult,
} from '@mgw/contracts';
import type { MessageStore } from '@mgw/store';
import type { Outcome } from '../http/idempotency.js';
import type { JobOutcome } from '../clients/queue-events-pool.js';
import type { MessageAcceptor } from './message-acceptor.js';

/** How long the API keeps waiting for an OTP whose send attempt had started when time ran out. */
const IN_FLIGHT_GRACE_MS = 20_000;

export interface OtpDeps {
  acceptor: MessageAcceptor;
  messages: MessageStore;
  metrics: Metrics;
  otpWaitTimeoutMs: number;
}

/**
 * POST /otp: an OTP job jumps the device's queue (priority), and the API waits for it (bounded)
 * because the answer carries the WhatsApp message id and the time it was sent.
 * 200 sent; 502 the send failed; 504 not sent in time — and then it never will be: the message
 * is expired atomically unless an attempt already started, in which case the API waits for that
 * attempt to end (a later attempt is refused by the job's own expiry).
 */
export async function sendOtp(deps: OtpDeps, deviceId: string, body: OtpBody): Promise<Outcome> {
  const started = process.hrtime.bigint();
  const { job, outcome: first } = await deps.acceptor.acceptAndWait(
    {
      deviceId,
      kind: 'otp',
      recipients: [body.phone],
      content: { text: renderOtp(body.code, body.language), otp: { language: body.language } },
      priority: PRIORITY.otp,
      expiresAt: Date.now() + deps.otpWaitTimeoutMs,
    },
    deps.otpWaitTimeoutMs,
  );
  const outcome =
    first.kind === 'timeout' || first.kind === 'removed' ? await afterTimeout(deps, job) : first;

  if (outcome.kind === 'timeout' || outcome.kind === 'uncertain') {
    const error = outcome.kind === 'timeout' ? ERRORS.otpTimeout : ERRORS.otpUncertain;
    return { status: 504, body: { success: false, error, messageId: job.messageId } };
  }
  if (outcome.kind === 'failed') {
    return {
      status: 502,
      body: { success: false, error: ERRORS.otpFailedPrefix + outcome.reason, messageId: job.messageId },
    };
  }
  const result = outcome.value;
  deps.metrics.otpSent.inc({ language: body.language });
  deps.metrics.otpLatency.observe(Number(process.hrtime.bigint() - started) / 1e9);
  return {
    status: 200,
    body: {
      success: true,
      message: 'OTP sent successfully',
      data: {
        messageId: job.messageId,
        platformMessageId: result.platformMessageId ?? job.platformMessageId,
        phone: result.phone ?? body.phone,
        code: body.code,
        language: body.language,
        sentAt: result.sentAt,
      },
    },
  };
}

/** The wait ran out: expire the OTP, or — if a send attempt is under way — wait for that attempt. */
async function afterTimeout(
  deps: OtpDeps,
  job: SendJobData,
): Promise<Exclude<JobOutcome<SendJobResult>, { kind: 'removed' }> | { kind: 'uncertain' }> {
  const expired = await deps.messages.expireUnclaimed(job, FAILURE_REASONS.otpExpired);
  if (expired === 'expired') {
    await deps.acceptor
      .queue(job.deviceId)
      .remove(job.messageId)
      .catch(() => 0);
    return { kind: 'timeout' };
  }
  if (expired === 'claimed') {
    const last = await deps.acceptor.waitFor(job, IN_FLIGHT_GRACE_MS);
    if (last.kind === 'completed' || last.kind === 'failed') return last;
  }
  // Settled already (or removed meanwhile): the record says how it ended.
  const record = await deps.messages.get(job.deviceId, job.messageId);
  if (record?.status === 'failed')
    return { kind: 'failed', reason: record.error ?? FAILURE_REASONS.sendFailed };
  if (record?.sentAt) {
    const value = { messageId: job.messageId, platformMessageId: job.platformMessageId, phone: job.to };
    return { kind: 'completed', value: { ...value, sentAt: record.sentAt } };
  }
  // The attempt outlived the grace (e.g. a slow upload): say so rather than promise anything.
  return { kind: 'uncertain' };
}
