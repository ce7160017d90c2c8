import { RedisScript, type RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { EMIT_LUA } from './events.js';

export type BatchAction = 'pause' | 'resume' | 'cancel';

/**
 * What a control did: `changed` (the state moved, its event was emitted), `same` (already so: a
 * repeat), or why it could not: `missing` (no such list), `completed` (every message already left
 * the queue), `cancelled` (pause or resume of a cancelled list).
 */
export type BatchControlOutcome = 'changed' | 'same' | 'missing' | 'completed' | 'cancelled';

/**
 * KEYS: batch, webhook, event outbox. ARGV: action (pause|resume|cancel), now (ISO 8601),
 * deviceId, batchId, events channel. Returns a BatchControlOutcome.
 *
 * One script: the state the control is checked against is the state it changes (a GET-then-HSET
 * would let a cancel and a resume interleave and leave a cancelled list `active`), and the event is
 * written with the change (events.ts). The message claim script reads `cancelledAt` and `pausedAt`
 * in the same slot, so once this ran no message of the list starts a send (cancel) or until a
 * resume (pause).
 */
const CONTROL_SCRIPT = `${EMIT_LUA}
local batch, hook, outbox = KEYS[1], KEYS[2], KEYS[3]
local action, now, deviceId, batchId, channel = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local b = redis.call('HMGET', batch, 'total', 'cancelledAt', 'completedAt', 'pausedAt')
if not b[1] then return 'missing' end
local function announce(etype, state, field)
  local seq = redis.call('HINCRBY', batch, 'controlSeq', 1)
  local d = { deviceId = deviceId, batchId = batchId, state = state }
  d[field] = now
  mgw_emit(hook, outbox, channel, deviceId, batchId .. '.' .. action .. '.' .. seq, etype, now, cjson.encode(d))
  return 'changed'
end
if action == 'cancel' then
  if b[2] then return 'same' end
  if b[3] then return 'completed' end
  redis.call('HSET', batch, 'cancelledAt', now)
  redis.call('HDEL', batch, 'pausedAt')
  return announce('batch.cancelled', 'cancelled', 'cancelledAt')
end
if b[2] then return 'cancelled' end
if b[3] then return 'completed' end
if action == 'pause' then
  if b[4] then return 'same' end
  redis.call('HSET', batch, 'pausedAt', now)
  return announce('batch.paused', 'paused', 'pausedAt')
end
if not b[4] then return 'same' end
redis.call('HDEL', batch, 'pausedAt')
return announce('batch.resumed', 'active', 'resumedAt')
`;

const CONTROL = new RedisScript<BatchControlOutcome>('mgwBatchControl', CONTROL_SCRIPT);

/** Pauses, resumes or cancels the device's list `batchId` (see CONTROL_SCRIPT). */
export async function controlBatch(
  redis: RedisClient,
  deviceId: string,
  batchId: string,
  action: BatchAction,
  now = new Date(),
): Promise<BatchControlOutcome> {
  return CONTROL.run(
    redis,
    [keys.batch(deviceId, batchId), keys.webhook(deviceId), keys.eventOutbox(deviceId)],
    [action, now.toISOString(), deviceId, batchId, keys.eventsChannel()],
  );
}

/** Whether the list stops its messages now: `cancelled`, `paused`, or undefined (it sends). */
export async function batchStop(
  redis: RedisClient,
  deviceId: string,
  batchId: string,
): Promise<'cancelled' | 'paused' | undefined> {
  const [cancelledAt, pausedAt] = await redis.hmget(keys.batch(deviceId, batchId), 'cancelledAt', 'pausedAt');
  if (cancelledAt) return 'cancelled';
  return pausedAt ? 'paused' : undefined;
}

/** Ids of the list's messages held now (a page of its held set at a time). */
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

/** Up to `count` ids of the list's messages held now, any of them (the dashboard reads their `held`). */
export async function someHeldMessageIds(
  redis: RedisClient,
  deviceId: string,
  batchId: string,
  count: number,
): Promise<string[]> {
  return redis.srandmember(keys.batchHeld(deviceId, batchId), count);
}
