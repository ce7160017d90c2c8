import type { RequestHandler } from 'express';
import { ERRORS, emptyQuerySchema, otpBodySchema, type OtpBody } from '@mgw/contracts';
import type { ApiServices } from '../api-services.js';
import { authOf } from '../http/auth.js';
import { sendOtp, type OtpOutcome } from '../accept/send-otp.js';
import type { Outcome } from '../http/idempotency.js';
import { refusalError } from '../http/refusal-error.js';
import { parse } from '../http/validation.js';
import { respond } from './respond.js';

/**
 * An OTP's outcome as its answer: 200 sent, 502 failed, 504 not sent in time — each an outcome
 * (kept for a replay); a refusal is thrown (its status and error, refusal-error.ts).
 */
export function otpAnswer(outcome: OtpOutcome, body: OtpBody): Outcome {
  switch (outcome.kind) {
    case 'sent':
      return {
        status: 200,
        body: {
          success: true,
          message: 'OTP sent successfully',
          data: {
            messageId: outcome.messageId,
            platformMessageId: outcome.platformMessageId,
            phone: outcome.phone,
            code: body.code,
            language: body.language,
            sentAt: outcome.sentAt,
          },
        },
      };
    case 'failed':
      return {
        status: 502,
        body: {
          success: false,
          error: ERRORS.otpFailedPrefix + outcome.reason,
          messageId: outcome.messageId,
        },
      };
    case 'timeout':
    case 'uncertain': {
      const error = outcome.kind === 'timeout' ? ERRORS.otpTimeout : ERRORS.otpUncertain;
      return { status: 504, body: { success: false, error, messageId: outcome.messageId } };
    }
    case 'refused':
      throw refusalError(outcome);
  }
}

/** POST /otp */
export function otpRoute(s: ApiServices): RequestHandler {
  const deps = { ...s, otpWaitTimeoutMs: s.config.otpWaitTimeoutMs };
  return async (req, res) => {
    const auth = authOf(res);
    parse(emptyQuerySchema, req.query);
    const body = parse(otpBodySchema, req.body ?? {});
    respond(
      res,
      await s.idempotency.run(req, auth.tokenHash, async () =>
        otpAnswer(await sendOtp(deps, auth.deviceId, body), body),
      ),
    );
  };
}
