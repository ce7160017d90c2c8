import { randomUUID } from 'node:crypto';
import type { RedisClient } from '@mgw/common';
import { keys, type ConnectionStatus, type SessionRecord } from '@mgw/contracts';
import { getDeviceState } from './device-state.js';
import { EMIT_LUA } from './events.js';

/**
 * KEYS: session, webhook, outbox. ARGV: status, fields JSON (set), fields JSON array (deleted),
 * channel, deviceId, event id, now (ISO), reason ('' for none). Writes the record and, when the
 * status changed, its `session.status` event in one step (see events.ts): two processes writing
 * statuses one after the other produce their events in that order.
 */
const SESSION_SCRIPT = `${EMIT_LUA}
local old = redis.call('HGET', KEYS[1], 'status')
for _, f in ipairs(cjson.decode(ARGV[3])) do redis.call('HDEL', KEYS[1], f) end
for k, v in pairs(cjson.decode(ARGV[2])) do redis.call('HSET', KEYS[1], k, v) end
if old == ARGV[1] then return 0 end
local r = redis.call('HMGET', KEYS[1], 'phone', 'name')
local d = { deviceId = ARGV[5], status = ARGV[1] }
if ARGV[8] ~= '' then d.reason = ARGV[8] end
if r[1] then d.phone = r[1] end
if r[2] then d.name = r[2] end
return mgw_emit(KEYS[2], KEYS[3], ARGV[4], ARGV[5], ARGV[6], 'session.status', ARGV[7], cjson.encode(d))`;

/**
 * The session record of each device (`keys.session`), read by GET /status and by the
 * API's "is a device connected?" check, written by whichever process owns the device's socket.
 * Every change of `status` publishes a `session.status` event (with the reason of a disconnect).
 */
export class SessionStore {
  constructor(private readonly redis: RedisClient) {}

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
    const reason = status === 'connecting' ? (fields.lastDisconnectReason ?? '') : '';
    await this.write(deviceId, status, values, [], now, reason);
  }

  /** Marks the device disconnected and forgets the account details (phone, name, picture). */
  async markDisconnected(deviceId: string, reason: string): Promise<void> {
    const now = new Date().toISOString();
    await this.write(
      deviceId,
      'disconnected',
      { status: 'disconnected', updatedAt: now, lastDisconnectReason: reason, lastDisconnectAt: now },
      ['phone', 'name', 'profilePic', 'connectedAt'],
      now,
      reason,
    );
  }

  private async write(
    deviceId: string,
    status: ConnectionStatus,
    set: Record<string, string>,
    del: string[],
    now: string,
    reason: string,
  ): Promise<void> {
    await this.redis.eval(
      SESSION_SCRIPT,
      3,
      keys.session(deviceId),
      keys.webhook(deviceId),
      keys.eventOutbox(deviceId),
      status,
      JSON.stringify(set),
      JSON.stringify(del),
      keys.eventsChannel(),
      deviceId,
      randomUUID(),
      now,
      reason,
    );
  }
}
