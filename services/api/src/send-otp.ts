import type { Metrics } from '@mgw/contracts';
import {
  ERRORS,
  PRIORITY,
  newMessageId,
  newPlatformMessageId,
  renderOtp,
  type OtpBody,
  type SendJobData,
} from '@mgw/contracts';
import type { Outcome } from './idempotency.js';
import { requireConnected, type SendDeps } from './send-message.js';

/**
 * POST /otp: an OTP job jumps the device's queue (priority), and the API waits for it (bounded)
 * because the answer carries the WhatsApp message id and the time it was sent.
 * 200 sent; 504 still queued after the wait; 502 the send failed. All three name the messageId.
 */
export async function sendOtp(
  deps: SendDeps & { metrics: Metrics; otpWaitTimeoutMs: number },
  deviceId: string,
  body: OtpBody,
): Promise<Outcome> {
  await requireConnected(deps.sessions, deviceId);
  const started = process.hrtime.bigint();
  const job: SendJobData = {
    kind: 'otp',
    messageId: newMessageId(),
    platformMessageId: newPlatformMessageId(),
    deviceId,
    to: body.phone,
    text: renderOtp(body.code, body.language),
    otp: { language: body.language },
    enqueuedAt: Date.now(),
  };
  const outcome = await deps.sendQueues.sendAndWait(deviceId, job, PRIORITY.otp, deps.otpWaitTimeoutMs);

  if (outcome.kind === 'timeout') {
    return { status: 504, body: { success: false, error: ERRORS.otpTimeout, messageId: job.messageId } };
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
