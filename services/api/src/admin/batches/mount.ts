import type { RequestHandler } from 'express';
import { ERRORS, batchesQuerySchema, emptyQuerySchema } from '@mgw/contracts';
import type { BatchAction } from '@mgw/store';
import type { ApiServices } from '../../api-services.js';
import { controlList } from '../../features/batches/control-batch.js';
import { ApiError } from '../../http/api-error.js';
import { parse } from '../../http/validation.js';
import { listControlAnswer } from '../../features/batches/mount.js';
import { deviceIdOf, type AdminMount, type AdminRoute } from '../admin-routes.js';
import { listDeviceBatches } from './list-device-batches.js';
import { showDeviceBatch } from './show-device-batch.js';

export type BatchesDeps = Pick<ApiServices, 'redis' | 'messages' | 'batches' | 'acceptor'>;

/** The device's lists (the Campaigns page): newest first, and their control as the public API's. */
export const batches: AdminMount = ({ s, guard, none }) => [
  { method: 'get', path: '/devices/:deviceId/batches', handlers: [guard, deviceBatchesRoute(s)] },
  { method: 'get', path: '/devices/:deviceId/batches/:batchId', handlers: [guard, deviceBatchRoute(s)] },
  ...(['pause', 'resume', 'cancel'] as const).map((action): AdminRoute => ({
    method: 'post',
    path: `/devices/:deviceId/batches/:batchId/${action}`,
    handlers: [guard, none, controlDeviceBatchRoute(s, action)],
  })),
];

/**
 * GET /devices/:deviceId/batches?limit=&cursor= — the device's lists, newest first
 * (list-device-batches.ts), with the public GET /batches's query rules.
 */
export function deviceBatchesRoute(d: BatchesDeps): RequestHandler {
  return async (req, res) => {
    const q = parse(batchesQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    res.status(200).json({ success: true, data: await listDeviceBatches(d, deviceId, q.limit, q.cursor) });
  };
}

/** GET /devices/:deviceId/batches/:batchId — a list's counts, like the public GET /batches/:batchId. */
export function deviceBatchRoute(d: Pick<BatchesDeps, 'batches'>): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const found = await showDeviceBatch(d, deviceIdOf(req), String(req.params.batchId ?? ''));
    if (found.kind === 'not_found') throw new ApiError(404, ERRORS.batchNotFound);
    res.status(200).json({ success: true, batch: found.batch });
  };
}

/**
 * POST /devices/:deviceId/batches/:batchId/pause | resume | cancel — the public list control for
 * any device (features/batches/control-batch.ts: the same script, sweep, events and errors).
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
