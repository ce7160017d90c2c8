import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { storeScript } from '../lua.js';

export type BatchAction = 'pause' | 'resume' | 'cancel';

/**
 * What a control did: `changed` (the state moved, its event was emitted), `same` (already so: a
 * repeat), or why it could not: `missing` (no such batch), `completed` (every message already left
 * the queue), `cancelled` (pause or resume of a cancelled batch).
 */
export type BatchControlOutcome = 'changed' | 'same' | 'missing' | 'completed' | 'cancelled';

/**
 * Checks and changes a batch's state in one step, its event written with the change
 * (`lua/batch-control-4.lua`): once a cancel ran, the message claim script (same slot) starts no
 * send of the batch.
 */
const CONTROL = storeScript<BatchControlOutcome>('batch-control-4');

/** Pauses, resumes or cancels the device's batch `batchId` (see `lua/batch-control-4.lua`). */
export async function controlBatch(
  redis: RedisClient,
  deviceId: string,
  batchId: string,
  action: BatchAction,
  now = new Date(),
): Promise<BatchControlOutcome> {
  return CONTROL.run(
    redis,
    [
      keys.batch(deviceId, batchId),
      keys.webhook(deviceId),
      keys.eventOutbox(deviceId),
      keys.eventLog(deviceId),
    ],
    [action, now.toISOString(), deviceId, batchId, keys.eventsChannel()],
  );
}

/** Whether the batch stops its messages now: `cancelled`, `paused`, or undefined (it sends). */
export async function batchStop(
  redis: RedisClient,
  deviceId: string,
  batchId: string,
): Promise<'cancelled' | 'paused' | undefined> {
  const [cancelledAt, pausedAt] = await redis.hmget(keys.batch(deviceId, batchId), 'cancelledAt', 'pausedAt');
  if (cancelledAt) return 'cancelled';
  return pausedAt ? 'paused' : undefined;
}

/** Ids of the batch's messages held now (a page of its held set at a time). */
export async function* heldMessageIds(
  redis: RedisClient,
  deviceId: string,
  batchId: string,
): AsyncGenerator<string[]> {
  let cursor = '0';
  do {
    const [next, ids] = await redis.sscan(keys.batchHeld(deviceId, batchId), cursor, 'COUNT', 500);
    cursor = next;
    if (ids.length) yield ids;
  } while (cursor !== '0');
}

/** Up to `count` ids of the batch's messages held now, any of them (the dashboard reads their `held`). */
export async function someHeldMessageIds(
  redis: RedisClient,
  deviceId: string,
  batchId: string,
  count: number,
): Promise<string[]> {
  return redis.srandmember(keys.batchHeld(deviceId, batchId), count);
}
