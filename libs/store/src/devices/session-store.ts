import { randomUUID } from 'node:crypto';
import type { RedisClient } from '@mgw/common';
import { keys, type ConnectionStatus, type PasskeyStep, type SessionRecord } from '@mgw/contracts';
import { getDeviceState } from './device-state.js';
import { storeScript } from '../lua.js';

/**
 * Writes the record and, when the status changed, its `session.status` event in one step (see
 * `lua/session-write-4.lua`).
 */
const SESSION_WRITE = storeScript<number>('session-write-4');

/** The record's fields of a passkey-gated link's step (`passkeyStep`). */
const PASSKEY_FIELDS = ['passkeyStep', 'passkeyExpiresAt'];

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
    // Any other change ends a passkey step the record showed.
    await this.write(deviceId, status, values, PASSKEY_FIELDS, now, reason);
  }

  /**
   * The account's name or photo changed while it is connected (an account route): the new values
   * for GET /status; `profilePic: null` removes the photo. No `session.status` event (the status
   * stays `connected`).
   */
  async updateAccount(
    deviceId: string,
    fields: { name?: string; profilePic?: string | null },
  ): Promise<void> {
    const now = new Date().toISOString();
    const set: Record<string, string> = { status: 'connected', updatedAt: now };
    const del: string[] = [];
    if (fields.name !== undefined) set.name = fields.name;
    if (fields.profilePic === null) del.push('profilePic');
    else if (fields.profilePic !== undefined) set.profilePic = fields.profilePic;
    await this.write(deviceId, 'connected', set, del, now, '');
  }

  /**
   * A passkey-gated link moved to `step` (docs/passkeys.md): the record says so for GET /status
   * (`passkeyStep`, `passkeyExpiresAt`) and a `session.status` event goes out for each step
   * (`connecting`, reason `passkey_required`, `passkey: {step, expiresAt}`), the status unchanged.
   * The code the phone shows is not in either: GET /connect/passkey answers it.
   */
  async passkeyStep(deviceId: string, step: PasskeyStep, expiresAt: number): Promise<void> {
    const now = new Date().toISOString();
    const expires = new Date(expiresAt).toISOString();
    await this.write(
      deviceId,
      'connecting',
      { status: 'connecting', updatedAt: now, passkeyStep: step, passkeyExpiresAt: expires },
      [],
      now,
      'passkey_required',
      { passkey: { step, expiresAt: expires } },
    );
  }

  /** Marks the device disconnected and forgets the account details (phone, name, picture). */
  async markDisconnected(deviceId: string, reason: string): Promise<void> {
    const now = new Date().toISOString();
    await this.write(
      deviceId,
      'disconnected',
      { status: 'disconnected', updatedAt: now, lastDisconnectReason: reason, lastDisconnectAt: now },
      ['phone', 'name', 'profilePic', 'connectedAt', ...PASSKEY_FIELDS],
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
    /** Always an event, with these fields added to its data (a passkey step). */
    event?: Record<string, unknown>,
  ): Promise<void> {
    await SESSION_WRITE.run(
      this.redis,
      [keys.session(deviceId), keys.webhook(deviceId), keys.eventOutbox(deviceId), keys.eventLog(deviceId)],
      [
        status,
        JSON.stringify(set),
        JSON.stringify(del),
        keys.eventsChannel(),
        deviceId,
        randomUUID(),
        now,
        reason,
        event ? '1' : '',
        event ? JSON.stringify(event) : '',
      ],
    );
  }
}
