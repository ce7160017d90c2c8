import type { RequestHandler } from 'express';
import { ApiError } from '../api-error.js';
import { ERRORS, emptyQuerySchema } from '@mgw/contracts';
import type { ApiServices } from '../api-services.js';
import { authOf } from '../auth.js';
import { parse } from '../validation.js';

/** GET /messages/:id: a message of the token's device; any other id is 404, not 403. */
export function messageRoute(s: ApiServices): RequestHandler {
  return async (req, res) => {
    const { deviceId } = authOf(res);
    parse(emptyQuerySchema, req.query);
    const id = String(req.params.id ?? '');
    const record = id.length <= 128 ? await s.messages.get(deviceId, id) : undefined;
    if (!record || record.deviceId !== deviceId) throw new ApiError(404, ERRORS.messageNotFound);
    res.status(200).json({ success: true, message: record });
  };
}
