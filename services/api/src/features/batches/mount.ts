import { feature } from '../../http/route-table.js';
import { batchPaths } from './openapi.js';
import type { RequestHandler } from 'express';
import { ERRORS, batchesQuerySchema, emptyQuerySchema, type BatchRecord } from '@mgw/contracts';
import type { BatchAction } from '@mgw/store';
import { ApiError } from '../../http/api-error.js';
import type { ApiServices } from '../../api-services.js';
import { authOf } from '../../http/auth.js';
import { parse } from '../../http/validation.js';
import { controlList, type ListControlOutcome } from './control-batch.js';
import { controlPoolList, type PoolListControlOutcome } from '../pools/pool-control.js';

/** A device's lists: their progress, and pausing, resuming or cancelling one (docs/api.md). */
export const batches = feature({
  name: 'batches',
  routes: [
    { method: 'get', path: '/batches', limit: 'messages', handler: 'list' },
    { method: 'get', path: '/batches/:batchId', limit: 'messages', handler: 'get' },
    { method: 'post', path: '/batches/:batchId/pause', limit: 'messages', body: 'none', handler: 'pause' },
    { method: 'post', path: '/batches/:batchId/resume', limit: 'messages', body: 'none', handler: 'resume' },
    { method: 'post', path: '/batches/:batchId/cancel', limit: 'messages', body: 'none', handler: 'cancel' },
  ],
  handlers: (s) => ({
    list: listBatchesRoute(s),
    get: batchRoute(s),
    pause: controlBatchRoute(s, 'pause'),
    resume: controlBatchRoute(s, 'resume'),
    cancel: controlBatchRoute(s, 'cancel'),
  }),
  paths: batchPaths,
});

/** A list control's outcome as its answer's data: the list, or its refusal thrown (404, 409). */
export function listControlAnswer(outcome: ListControlOutcome | PoolListControlOutcome): BatchRecord {
  if (outcome.kind === 'done') return outcome.batch;
  if (outcome.reason === 'completed') throw new ApiError(409, ERRORS.batchCompleted);
  if (outcome.reason === 'cancelled') throw new ApiError(409, ERRORS.batchCancelled);
  throw new ApiError(404, ERRORS.batchNotFound);
}

/**
 * GET /batches/:batchId: a list's state and counts by status (they sum to `total`; `held` counts
 * the queued ones held now); another device's is 404.
 */
export function batchRoute(s: ApiServices): RequestHandler {
  return async (req, res) => {
    const { deviceId, poolId } = authOf(res);
    parse(emptyQuerySchema, req.query);
    const id = String(req.params.batchId ?? '');
    const data =
      id.length > 128
        ? undefined
        : poolId
          ? await s.poolBatches.get(poolId, id)
          : await s.batches.get(deviceId, id);
    if (!data) throw new ApiError(404, ERRORS.batchNotFound);
    res.status(200).json({ success: true, data });
  };
}

/** GET /batches: the device's lists, newest first, a page at a time (`nextCursor`). */
export function listBatchesRoute(s: ApiServices): RequestHandler {
  return async (req, res) => {
    const { deviceId, poolId } = authOf(res);
    const q = parse(batchesQuerySchema, req.query);
    const data = poolId
      ? await s.poolBatches.list(poolId, q.limit, q.cursor)
      : await s.batches.list(deviceId, q.limit, q.cursor);
    res.status(200).json({ success: true, data });
  };
}

/** POST /batches/:batchId/pause | resume | cancel (see control/control-batch.ts). */
export function controlBatchRoute(s: ApiServices, action: BatchAction): RequestHandler {
  return async (req, res) => {
    const { deviceId, poolId } = authOf(res);
    parse(emptyQuerySchema, req.query);
    const id = String(req.params.batchId ?? '');
    const data = listControlAnswer(
      poolId
        ? await controlPoolList(s, poolId, id, action, req.log)
        : await controlList(s, deviceId, id, action, req.log),
    );
    res.status(200).json({ success: true, data });
  };
}
