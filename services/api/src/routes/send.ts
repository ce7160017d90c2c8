import type { RequestHandler } from 'express';
import { emptyQuerySchema, sendBodySchema } from '@mgw/contracts';
import type { ApiServices } from '../api-services.js';
import { authOf } from '../http/auth.js';
import { sendMessage } from '../accept/send-message.js';
import { parse, parseSendBody } from '../http/validation.js';
import { respond } from './respond.js';

/** POST /send */
export function sendRoute(s: ApiServices): RequestHandler {
  const schema = sendBodySchema(s.config.maxRecipients);
  return async (req, res) => {
    const auth = authOf(res);
    // Almost every /send has no query at all: nothing for joi to judge.
    if (req.url.includes('?')) parse(emptyQuerySchema, req.query);
    const body = parseSendBody(schema, req.body ?? {}, s.config.maxRecipients);
    respond(res, await s.idempotency.run(req, auth.tokenHash, () => sendMessage(s, auth.deviceId, body)));
  };
}
