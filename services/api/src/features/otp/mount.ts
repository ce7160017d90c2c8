import { ERRORS, emptyQuerySchema, otpBodySchema, type OtpBody } from '@mgw/contracts';
import { FIELD_ALLOWANCE, feature, type BodySpec } from '../../http/route-table.js';
import { otpOperations, otpSchemas } from './openapi.js';
import type { RequestHandler } from 'express';
import type { Uses } from '../../api-services.js';
import { authOf } from '../../http/auth.js';
import { idempotencyScope } from '../../http/route-helpers.js';
import { sendOtp, type OtpOutcome } from './send-otp.js';
import { otpFallback, rememberFallback, type OtpFallbackDeps } from './otp-fallback.js';
import { PoolStore } from '@mgw/store';
import { OutcomeUnknownError, type Outcome } from '../../http/idempotency.js';
import { refusalError } from '../../http/refusal-error.js';
import { parse } from '../../http/validation.js';
import { respond } from '../../http/respond.js';

/** An OTP body is a phone number, a code and a language: 4 KB is plenty. */
export const OTP_BODY_LIMIT_BYTES = 4 * 1024;
const otpBody: BodySpec = {
  json: {
    limitBytes: OTP_BODY_LIMIT_BYTES,
    tooLargeError: ERRORS.otpBodyTooLarge,
    maxValues: FIELD_ALLOWANCE,
  },
};

/** One-time passwords in English or Arabic, answered once sent (docs/api.md). */
export const otp = feature({
  name: 'otp',
  routes: [{ method: 'post', path: '/otp', limit: 'otp', body: otpBody, handler: 'otp', hot: true }],
  handlers: (s) => ({ otp: otpRoute(s) }),
  operations: otpOperations,
  schemas: otpSchemas,
});

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
    case 'unknown':
      throw new OutcomeUnknownError(outcome.messageId ? { messageId: outcome.messageId } : {});
    case 'refused':
      throw refusalError(outcome);
  }
}

/** POST /otp */
function otpRoute(
  s: Uses<
    | 'config'
    | 'idempotency'
    | 'acceptor'
    | 'messages'
    | 'metrics'
    | 'blocklist'
    | 'cloudSend'
    | 'cloudDevices'
    | 'redis'
  >,
): RequestHandler {
  const deps = { ...s, otpWaitTimeoutMs: s.config.otpWaitTimeoutMs };
  const fallback: OtpFallbackDeps = {
    redis: s.redis,
    pools: new PoolStore(s.redis),
    cloudDevices: s.cloudDevices,
    engines: s.cloudSend.engines,
    retentionSeconds: s.config.store.messageRetentionSeconds,
  };
  return async (req, res) => {
    const auth = authOf(res);
    parse(emptyQuerySchema, req.query);
    const body = parse(otpBodySchema, req.body ?? {});
    respond(
      res,
      await s.idempotency.run(req, idempotencyScope(res, auth.deviceId), async ({ seed }) => {
        const via = await otpFallback(fallback, auth.deviceId);
        if (via) req.log.info('otp falls back to the pool’s cloud device', { deviceId: auth.deviceId, via });
        const outcome = await sendOtp(deps, via ?? auth.deviceId, body, seed);
        if (via && 'messageId' in outcome && outcome.messageId)
          await rememberFallback(fallback, auth.deviceId, outcome.messageId, via);
        const answer = otpAnswer(outcome, body);
        return via ? sentThrough(answer, via) : answer;
      }),
    );
  };
}

/**
 * An OTP sent by the pool's Cloud API device instead of the token's paused one: its answer says
 * which device and engine sent it (`data.deviceId`, `data.engine`), beside the contract's fields;
 * its record is that device's, which GET /messages/:id with the token's device also reads
 * (`rememberFallback`).
 */
function sentThrough(answer: Outcome, deviceId: string): Outcome {
  const body = answer.body as { data?: Record<string, unknown> };
  if (!body.data) return answer;
  return { ...answer, body: { ...body, data: { ...body.data, deviceId, engine: 'cloud' } } };
}
