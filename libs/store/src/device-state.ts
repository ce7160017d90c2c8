import type { ChainableCommander, Redis } from 'ioredis';
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

/** Appends the reads of `DeviceState` to a pipeline or transaction (4 replies, see `parseDeviceState`). */
export function readDeviceState(batch: ChainableCommander, deviceId: string): ChainableCommander {
  return batch
    .hmget(keys.session(deviceId), 'status', 'linkGeneration')
    .sismember(keys.linkedDevices(), deviceId)
    .hmget(keys.deviceQueue(deviceId), 'messages', 'bytes');
}

/** Parses the replies `readDeviceState` added, starting at `offset`. */
export function parseDeviceState(replies: [Error | null, unknown][], offset = 0): DeviceState {
  const value = (i: number) => {
    const [err, v] = replies[offset + i] ?? [new Error('missing reply')];
    if (err) throw err;
    return v;
  };
  const [status, generation] = value(0) as (string | null)[];
  const linked = value(1) === 1;
  const [messages, bytes] = value(2) as (string | null)[];
  return {
    acceptsMessages: status === 'connected' || (status === 'connecting' && linked),
    linkGeneration: Number(generation ?? 0),
    queuedMessages: Math.max(0, Number(messages ?? 0)),
    queuedBytes: Math.max(0, Number(bytes ?? 0)),
  };
}

export async function getDeviceState(redis: Redis, deviceId: string): Promise<DeviceState> {
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
export function nextLinkGeneration(redis: Redis, deviceId: string): Promise<number> {
  return redis.hincrby(keys.session(deviceId), 'linkGeneration', 1);
}
