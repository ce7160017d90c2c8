import type { RedisClient } from '@mgw/common';
import type { ChainableCommander } from 'ioredis';
import { keys } from '@mgw/contracts';

/** What the API needs to know about a device before it accepts messages for it. */
export interface DeviceState {
  /** Connected, or linked and reconnecting (its socket closed for a moment; jobs wait). */
  acceptsMessages: boolean;
  /** Bumped whenever the device's messages are removed (logout, unlink, forceNew). */
  linkGeneration: number;
  queuedMessages: number;
  queuedBytes: number;
}

/**
 * Whether a device has credentials the senders serve is kept twice: in the global set
 * `keys.linkedDevices()` (the roster the senders scan) and as the field `linked` of the device's
 * session hash, so that the API's accept transaction reads it from the device's own Redis Cluster
 * slot. Set together on link and cleared together on logout, the field first both ways.
 */
const LINKED_FIELD = 'linked';

export async function markLinked(redis: RedisClient, deviceId: string): Promise<void> {
  await redis.hset(keys.session(deviceId), LINKED_FIELD, '1');
  await redis.sadd(keys.linkedDevices(), deviceId);
}

export async function markUnlinked(redis: RedisClient, deviceId: string): Promise<void> {
  await redis.hdel(keys.session(deviceId), LINKED_FIELD);
  await redis.srem(keys.linkedDevices(), deviceId);
}

/**
 * Sets the session's `linked` field of a device the roster lists (a sender claiming it). Heals
 * records written before the field existed; a no-op otherwise.
 */
export async function confirmLinked(redis: RedisClient, deviceId: string): Promise<void> {
  await redis.hset(keys.session(deviceId), LINKED_FIELD, '1');
}

/** How many replies `readDeviceState` adds. */
export const DEVICE_STATE_REPLIES = 2;

/**
 * Appends the reads of `DeviceState` to a pipeline or transaction (`DEVICE_STATE_REPLIES`
 * replies, see `parseDeviceState`). Only keys of the device's hash tag: one Cluster slot.
 */
export function readDeviceState(batch: ChainableCommander, deviceId: string): ChainableCommander {
  return batch
    .hmget(keys.session(deviceId), 'status', 'linkGeneration', LINKED_FIELD)
    .hmget(keys.deviceQueue(deviceId), 'messages', 'bytes');
}

/** Parses the replies `readDeviceState` added, starting at `offset`. */
export function parseDeviceState(replies: [Error | null, unknown][], offset = 0): DeviceState {
  const value = (i: number) => {
    const [err, v] = replies[offset + i] ?? [new Error('missing reply')];
    if (err) throw err;
    return v;
  };
  const [status, generation, linkedField] = value(0) as (string | null)[];
  const linked = linkedField === '1';
  const [messages, bytes] = value(1) as (string | null)[];
  return {
    acceptsMessages: status === 'connected' || (status === 'connecting' && linked),
    linkGeneration: Number(generation ?? 0),
    queuedMessages: Math.max(0, Number(messages ?? 0)),
    queuedBytes: Math.max(0, Number(bytes ?? 0)),
  };
}

export async function getDeviceState(redis: RedisClient, deviceId: string): Promise<DeviceState> {
  const replies = await readDeviceState(redis.pipeline(), deviceId).exec();
  return parseDeviceState(replies ?? []);
}

/** Counts newly accepted messages against the device's quota (in the transaction that adds them). */
export function stageQueued(
  multi: ChainableCommander,
  deviceId: string,
  messages: number,
  bytes: number,
): void {
  multi.hincrby(keys.deviceQueue(deviceId), 'messages', messages);
  if (bytes > 0) multi.hincrby(keys.deviceQueue(deviceId), 'bytes', bytes);
}

/** Starts a new link generation: messages accepted before it are never sent. Returns it. */
export function nextLinkGeneration(redis: RedisClient, deviceId: string): Promise<number> {
  return redis.hincrby(keys.session(deviceId), 'linkGeneration', 1);
}
