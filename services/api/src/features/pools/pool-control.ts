import type { Logger } from '@mgw/common';
import type { PoolBatchRecord } from '@mgw/contracts';
import type { BatchAction } from '@mgw/store';
import type { ApiServices } from '../../api-services.js';
import { controlDeviceBatch } from '../batches/index.js';

export type PoolBatchControlOutcome =
  | { kind: 'done'; batch: PoolBatchRecord }
  | { kind: 'refused'; reason: 'not_found' | 'completed' | 'cancelled' };

/**
 * POST /batches/:batchId/pause | resume | cancel through a pool: the whole batch's state is the
 * pool's (a part a move creates later takes it: pools/pool-mover.ts), then each device's part is
 * controlled as a device's own batch is (features/batches/control-batch.ts), and the whole batch answered.
 * Refused as a device's batch is: unknown (404), every message out of the queue (409), pause or
 * resume of a cancelled batch (409).
 */
export async function controlPoolBatch(
  s: Pick<ApiServices, 'redis' | 'messages' | 'batches' | 'acceptor' | 'poolBatches'>,
  poolId: string,
  batchId: string,
  action: BatchAction,
  log: Logger,
): Promise<PoolBatchControlOutcome> {
  const before = batchId.length <= 128 ? await s.poolBatches.get(poolId, batchId) : undefined;
  if (!before) return { kind: 'refused', reason: 'not_found' };
  if (before.state === 'cancelled' && action !== 'cancel') return { kind: 'refused', reason: 'cancelled' };
  if (before.state === 'completed') return { kind: 'refused', reason: 'completed' };
  await s.poolBatches.control(poolId, batchId, action);
  // The devices read after the pool's state is written: a move that adds a device either is
  // read here or reads the new state itself (the mover checks it after each move).
  const meta = await s.poolBatches.meta(poolId, batchId);
  for (const deviceId of meta?.devices ?? []) {
    const outcome = await controlDeviceBatch(s, deviceId, batchId, action, log);
    // A part whose messages all moved away or were sent is done: nothing to control there.
    if (outcome.kind === 'refused' && outcome.reason !== 'completed' && outcome.reason !== 'not_found')
      log.warn('pooled batch part not controlled', { poolId, batchId, deviceId, reason: outcome.reason });
  }
  const batch = await s.poolBatches.get(poolId, batchId);
  return batch ? { kind: 'done', batch } : { kind: 'refused', reason: 'not_found' };
}
