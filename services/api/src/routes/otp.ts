import type { RequestHandler } from 'express';
import { emptyQuerySchema, otpBodySchema } from '@mgw/contracts';
import type { ApiServices } from '../api-services.js';
import { authOf } from '../http/auth.js';
import { sendOtp } from '../accept/send-otp.js';
import { parse } from '../http/validation.js';
import { respond } from './respond.js';

/** POST /otp */
export function otpRoute(s: ApiServices): RequestHandler {
  const deps = { ...s, otpWaitTimeoutMs: s.config.otpWaitTimeoutMs };
  return async (req, res) => {
    const auth = authOf(res);
    parse(emptyQuerySchema, req.query);
    const body = parse(otpBodySchema, req.body ?? {});
    respond(res, await s.idempotency.run(req, auth.tokenHash, () => sendOtp(deps, auth.deviceId, body)));
  };
}
