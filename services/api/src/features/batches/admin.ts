import type { RequestHandler } from 'express';
import { ERRORS, batchesQuerySchema, emptyQuerySchema } from '@mgw/contracts';
import type { Uses } from '../../api-services.js';
import { ApiError } from '../../http/api-error.js';
import { deviceIdOf } from '../../http/route-helpers.js';
import type { AdminRoute } from '../../http/route-table.js';
import { parse } from '../../http/validation.js';
import { listDeviceBatches } from './list-device-batches.js';
import type { BatchControlName } from './mount.js';
import { showDeviceBatch } from './show-device-batch.js';

export type BatchAdminName =
  'adminDeviceBatches' | 'adminDeviceBatch' | `admin${Capitalize<BatchControlName>}`;

const batch = '/devices/:deviceId/batches/:batchId';

/**
 * A device's batches for the dashboard's Campaigns page: newest first, one batch, and their
 * control as the public API's (pause, resume, cancel), for the device the path names.
 */
export const batchAdminRoutes: AdminRoute<BatchAdminName>[] = [
  {
    surface: 'admin',
    method: 'get',
    path: '/devices/:deviceId/batches',
    handler: 'adminDeviceBatches',
    console: 'read',
  },
  { surface: 'admin', method: 'get', path: batch, handler: 'adminDeviceBatch', console: 'read' },
  {
    surface: 'admin',
    method: 'post',
    path: `${batch}/pause`,
    body: 'none',
    handler: 'adminPauseBatch',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'post',
    path: `${batch}/resume`,
    body: 'none',
    handler: 'adminResumeBatch',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'post',
    path: `${batch}/cancel`,
    body: 'none',
    handler: 'adminCancelBatch',
    console: 'admin',
  },
];

/**
 * The handlers of the rows: the reads of the Campaigns page, and the public control handlers
 * (mount.ts builds them for the device the path names) under their admin names.
 */
export function batchAdminHandlers(
  s: Uses<'redis' | 'messages' | 'batches'>,
  forPathDevice: Record<BatchControlName, RequestHandler>,
): Record<BatchAdminName, RequestHandler> {
  return {
    adminDeviceBatches: deviceBatchesRoute(s),
    adminDeviceBatch: deviceBatchRoute(s),
    adminPauseBatch: forPathDevice.pauseBatch,
    adminResumeBatch: forPathDevice.resumeBatch,
    adminCancelBatch: forPathDevice.cancelBatch,
  };
}

/**
 * GET /devices/:deviceId/batches?limit=&cursor= — the device's batches, newest first
 * (list-device-batches.ts), with the public GET /batches's query rules.
 */
function deviceBatchesRoute(d: Uses<'redis' | 'messages' | 'batches'>): RequestHandler {
  return async (req, res) => {
    const q = parse(batchesQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    res.status(200).json({ success: true, data: await listDeviceBatches(d, deviceId, q.limit, q.cursor) });
  };
}

/** GET /devices/:deviceId/batches/:batchId — a batch's counts, like the public GET /batches/:batchId. */
function deviceBatchRoute(d: Uses<'batches'>): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const found = await showDeviceBatch(d, deviceIdOf(req), String(req.params.batchId ?? ''));
    if (found.kind === 'not_found') throw new ApiError(404, ERRORS.batchNotFound);
    res.status(200).json({ success: true, batch: found.batch });
  };
}
