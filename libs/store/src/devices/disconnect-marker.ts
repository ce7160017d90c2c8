import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { storeScript } from '../lua.js';

/**
 * A device's disconnect marker (`keys.disconnecting`): one /disconnect per device at a time across
 * replicas. The first claims it; the next ones read the running marker and wait for its outcome,
 * which the first publishes in the marker when it ends. The marker's JSON is the caller's (an `id`
 * and a `state`, 'running' or 'done', are what the scripts read).
 */

const CLAIM = storeScript<string | null>('disconnect-claim-1');
const FINISH = storeScript<number>('disconnect-finish-1');

/**
 * Takes the device's marker for this disconnect unless another one runs (see
 * `lua/disconnect-claim-1.lua`): returns that one's marker (JSON) when it does, else undefined.
 * `takeover` names a running marker whose process died: it is taken over.
 */
export async function claimDisconnect(
  redis: RedisClient,
  deviceId: string,
  marker: string,
  ttlMs: number,
  takeover = '',
): Promise<string | undefined> {
  const other = await CLAIM.run(redis, [keys.disconnecting(deviceId)], [marker, String(ttlMs), takeover]);
  return other ?? undefined;
}

/**
 * Publishes the ended marker `done` for the joiners, only while the marker is still the one with
 * `id` (see `lua/disconnect-finish-1.lua`); true when written.
 */
export async function finishDisconnect(
  redis: RedisClient,
  deviceId: string,
  id: string,
  done: string,
  ttlMs: number,
): Promise<boolean> {
  return (await FINISH.run(redis, [keys.disconnecting(deviceId)], [id, done, String(ttlMs)])) === 1;
}

/** The device's marker (JSON) as it is now, if any. */
export async function readDisconnectMarker(
  redis: RedisClient,
  deviceId: string,
): Promise<string | undefined> {
  return (await redis.get(keys.disconnecting(deviceId))) ?? undefined;
}
