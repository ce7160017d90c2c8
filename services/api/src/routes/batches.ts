import type { RequestHandler } from 'express';
import { ERRORS, emptyQuerySchema } from '@mgw/contracts';
import { ApiError } from '../http/api-error.js';
import type { ApiServices } from '../api-services.js';
import { authOf } from '../http/auth.js';
import { parse } from '../http/validation.js';

/** GET /batches/:batchId: a list's counts by status (they sum to `total`); another device's is 404. */
export function batchRoute(s: ApiServices): RequestHandler {
  return async (req, res) => {
    const { deviceId } = authOf(res);
    parse(emptyQuerySchema, req.query);
    const id = String(req.params.batchId ?? '');
    const data = id.length <= 128 ? await s.batches.get(deviceId, id) : undefined;
    if (!data) throw new ApiError(404, ERRORS.batchNotFound);
    res.status(200).json({ success: true, data });
  };
}
