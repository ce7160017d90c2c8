import type { RequestHandler } from 'express';
import { batchesQuerySchema, emptyQuerySchema } from '@mgw/contracts';
import type { BatchAction } from '@mgw/store';
import type { ApiServices } from '../api-services.js';
import { controlList } from '../control/control-batch.js';
import { parse } from '../http/validation.js';
import { listControlAnswer } from '../features/batches/mount.js';
import { deviceBatches } from './batches.js';
import { deviceIdOf } from './devices-routes.js';

export type BatchesDeps = Pick<ApiServices, 'redis' | 'messages' | 'batches' | 'acceptor'>;

/**
 * GET /devices/:deviceId/batches?limit=&cursor= — the device's lists, newest first (batches.ts),
 * with the public GET /batches's query rules.
 */
export function deviceBatchesRoute(d: BatchesDeps): RequestHandler {
  return async (req, res) => {
    const q = parse(batchesQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    res.status(200).json({ success: true, data: await deviceBatches(d, deviceId, q.limit, q.cursor) });
  };
}

/**
 * POST /devices/:deviceId/batches/:batchId/pause | resume | cancel — the public list control for
 * any device (control/control-batch.ts: the same script, sweep, events and errors).
 */
export function controlDeviceBatchRoute(d: BatchesDeps, action: BatchAction): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    const batchId = String(req.params.batchId ?? '');
    const batch = listControlAnswer(await controlList(d, deviceId, batchId, action, req.log));
    res.status(200).json({ success: true, data: batch });
  };
}
