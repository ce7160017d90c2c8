import type { Request, RequestHandler, Response } from 'express';
import { ERRORS, batchesQuerySchema, emptyQuerySchema, type BatchRecord } from '@mgw/contracts';
import type { BatchAction } from '@mgw/store';
import type { Uses } from '../../api-services.js';
import { ApiError } from '../../http/api-error.js';
import { authOf } from '../../http/auth.js';
import { deviceIdOf } from '../../http/route-helpers.js';
import { feature } from '../../http/route-table.js';
import { parse } from '../../http/validation.js';
import { controlPoolBatch, type PoolBatchControlOutcome } from '../pools/index.js';
import { batchAdminHandlers, batchAdminRoutes, type BatchAdminName } from './admin.js';
import { controlDeviceBatch, type DeviceBatchControlOutcome } from './control-batch.js';
import { batchOperations, batchSchemas, batchAdminOperations, batchAdminSchemas } from './openapi.js';

/** The public control routes' handlers (the admin API serves them too: admin.ts). */
export type BatchControlName = 'pauseBatch' | 'resumeBatch' | 'cancelBatch';
/** The public routes' handlers, each the key of its OpenAPI operation (openapi.ts). */
export type BatchName = 'listBatches' | 'getBatch' | BatchControlName;

/**
 * A device's batches: their progress, and pausing, resuming or cancelling one (docs/api.md). A
 * pool token reads and controls the batches it sent through its pool. The admin API's Campaigns
 * page reads any device's batches and controls them as the public API does (admin.ts).
 */
export const batches = feature<BatchName, BatchAdminName>({
  name: 'batches',
  routes: [
    { method: 'get', path: '/batches', limit: 'messages', pool: true, handler: 'listBatches' },
    { method: 'get', path: '/batches/:batchId', limit: 'messages', pool: true, handler: 'getBatch' },
    {
      method: 'post',
      path: '/batches/:batchId/pause',
      limit: 'messages',
      body: 'none',
      pool: true,
      handler: 'pauseBatch',
    },
    {
      method: 'post',
      path: '/batches/:batchId/resume',
      limit: 'messages',
      body: 'none',
      pool: true,
      handler: 'resumeBatch',
    },
    {
      method: 'post',
      path: '/batches/:batchId/cancel',
      limit: 'messages',
      body: 'none',
      pool: true,
      handler: 'cancelBatch',
    },
    ...batchAdminRoutes,
  ],
  handlers: (s) => ({
    listBatches: listBatchesRoute(s),
    getBatch: batchRoute(s),
    ...controlRoutes(s, tokenOwner),
    // The admin API's: its reads, and the same control handlers for the device its path names.
    ...batchAdminHandlers(s, controlRoutes(s, pathDevice)),
  }),
  operations: batchOperations,
  schemas: batchSchemas,
  adminOperations: batchAdminOperations,
  adminSchemas: batchAdminSchemas,
});

type BatchServices = Uses<'redis' | 'messages' | 'batches' | 'acceptor' | 'poolBatches'>;

/** Whose batches a request acts on: a device's, or a pool's (a pool token's). */
type OwnerOf = (req: Request, res: Response) => { deviceId: string; poolId?: string };
/** The public API's: the token's device, or its pool. */
const tokenOwner: OwnerOf = (_req, res) => authOf(res);
/** The admin API's: the device the path names. */
const pathDevice: OwnerOf = (req) => ({ deviceId: deviceIdOf(req) });

/** A batch control's outcome as its answer's data: the batch, or its refusal thrown (404, 409). */
function batchControlAnswer(outcome: DeviceBatchControlOutcome | PoolBatchControlOutcome): BatchRecord {
  if (outcome.kind === 'done') return outcome.batch;
  if (outcome.reason === 'completed') throw new ApiError(409, ERRORS.batchCompleted);
  if (outcome.reason === 'cancelled') throw new ApiError(409, ERRORS.batchCancelled);
  throw new ApiError(404, ERRORS.batchNotFound);
}

/**
 * GET /batches/:batchId: a batch's state and counts by status (they sum to `total`; `held` counts
 * the queued ones held now); another device's is 404.
 */
function batchRoute(s: Uses<'batches' | 'poolBatches'>): RequestHandler {
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

/** GET /batches: the device's batches, newest first, a page at a time (`nextCursor`). */
function listBatchesRoute(s: Uses<'batches' | 'poolBatches'>): RequestHandler {
  return async (req, res) => {
    const { deviceId, poolId } = authOf(res);
    const q = parse(batchesQuerySchema, req.query);
    const data = poolId
      ? await s.poolBatches.list(poolId, q.limit, q.cursor)
      : await s.batches.list(deviceId, q.limit, q.cursor);
    res.status(200).json({ success: true, data });
  };
}

/** POST /batches/:batchId/pause | resume | cancel, for the batches `ownerOf` names. */
function controlRoutes(s: BatchServices, ownerOf: OwnerOf): Record<BatchControlName, RequestHandler> {
  return {
    pauseBatch: controlBatchRoute(s, 'pause', ownerOf),
    resumeBatch: controlBatchRoute(s, 'resume', ownerOf),
    cancelBatch: controlBatchRoute(s, 'cancel', ownerOf),
  };
}

/**
 * One batch control (control-batch.ts; a pool's: features/pools), answered with the batch after
 * the change. The query is checked first: on the admin API a bad query is answered before a bad
 * device id in the path, as it was before the two shared this handler.
 */
function controlBatchRoute(s: BatchServices, action: BatchAction, ownerOf: OwnerOf): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const { deviceId, poolId } = ownerOf(req, res);
    const id = String(req.params.batchId ?? '');
    const data = batchControlAnswer(
      poolId
        ? await controlPoolBatch(s, poolId, id, action, req.log)
        : await controlDeviceBatch(s, deviceId, id, action, req.log),
    );
    res.status(200).json({ success: true, data });
  };
}
