import type { Redis } from 'ioredis';
import { keys, type ConnectionStatus, type SessionRecord } from '@mgw/contracts';
import { getDeviceState } from './device-state.js';

/**
 * The session record of each device (`keys.session`), read by GET /status and by the
 * API's "is a device connected?" check, written by whichever process owns the device's socket.
 */
export class SessionStore {
  constructor(private readonly redis: Redis) {}

  async get(deviceId: string): Promise<SessionRecord> {
    const h = await this.redis.hgetall(keys.session(deviceId));
    if (!h.status) return { status: 'disconnected' };
    return h as unknown as SessionRecord;
  }

  /**
   * Whether the device can take messages: connected, or linked and reconnecting (its socket
   * closed for a moment; jobs wait in its queue). A device that is only pairing cannot.
   */
  async acceptsMessages(deviceId: string): Promise<boolean> {
    return (await getDeviceState(this.redis, deviceId)).acceptsMessages;
  }

  /** Sets the status and any given fields; `undefined` fields are left as they are. */
  async update(
    deviceId: string,
    status: ConnectionStatus,
    fields: Partial<SessionRecord> = {},
  ): Promise<void> {
    const now = new Date().toISOString();
    const values: Record<string, string> = { status, updatedAt: now };
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) values[k] = String(v);
    if (status === 'connected' && !fields.connectedAt) values.connectedAt = now;
    await this.redis.hset(keys.session(deviceId), values);
  }

  /** Marks the device disconnected and forgets the account details (phone, name, picture). */
  async markDisconnected(deviceId: string, reason: string): Promise<void> {
    const now = new Date().toISOString();
    await this.redis
      .multi()
      .hdel(keys.session(deviceId), 'phone', 'name', 'profilePic', 'connectedAt')
      .hset(keys.session(deviceId), {
        status: 'disconnected',
        updatedAt: now,
        lastDisconnectReason: reason,
        lastDisconnectAt: now,
      })
      .exec();
  }
}
