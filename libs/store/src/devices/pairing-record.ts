import type { RedisClient } from '@mgw/common';
import { keys, type ConnectMethod, type PasskeyStep } from '@mgw/contracts';
import { storeScript } from '../lua.js';

/**
 * The pairing of a device as every connection replica sees it (`keys.pairing`): written by the
 * replica that holds the device's lease and runs the pairing socket, read by every connect, which
 * answers its current QR / pairing code instead of opening a second socket.
 * - starting: the lease is taken, the socket is opening (no code yet);
 * - showing: `qr` or `pairingCode` is the current one;
 * - failed / paired: the pairing ended (kept a few seconds so waiting connects learn how).
 */
export interface PairingRecord {
  pairingId: string;
  /** Lease owner (and liveness id) of the replica running the pairing. */
  owner: string;
  method: ConnectMethod;
  /** The phone number a pairing code was asked for ('' for a QR). */
  phone: string;
  state: 'starting' | 'showing' | 'failed' | 'paired';
  startedAt: number;
  qr?: string;
  pairingCode?: string;
  reason?: string;
  /**
   * A passkey-gated link (docs/passkeys.md): its step, when its request expires (ms), its WebAuthn
   * request options (JSON) and, from `confirm_code` on, the code the phone shows — the last two
   * sealed (`passkeyContext`): the options hold the request's challenge.
   */
  passkeyStep?: PasskeyStep;
  passkeyExpiresAt?: number;
  passkeyOptions?: string;
  passkeyCode?: string;
}

/** The sealing context of a pairing's passkey fields (the record's key and the field). */
export const passkeyContext = (deviceId: string, field: 'passkeyOptions' | 'passkeyCode') =>
  `${keys.pairing(deviceId)}:${field}`;

/** How long an ended record stays readable for the connects that waited on it. */
export const PAIRING_ENDED_TTL_MS = 15_000;

// Only the pairing that wrote the record may change it: a newer pairing of the same device
// (forceNew, another replica after a crash) owns the key then (see `lua/pairing-update-1.lua`).
const UPDATE_OWN = storeScript<number>('pairing-update-1');

export function isPairingRunning(rec: PairingRecord | undefined): rec is PairingRecord {
  return rec?.state === 'starting' || rec?.state === 'showing';
}

export async function readPairing(redis: RedisClient, deviceId: string): Promise<PairingRecord | undefined> {
  const raw = await redis.hgetall(keys.pairing(deviceId));
  if (!raw.pairingId || !raw.owner) return undefined;
  return {
    pairingId: raw.pairingId,
    owner: raw.owner,
    method: raw.method as ConnectMethod,
    phone: raw.phone ?? '',
    state: raw.state as PairingRecord['state'],
    startedAt: Number(raw.startedAt),
    ...(raw.qr ? { qr: raw.qr } : {}),
    ...(raw.pairingCode ? { pairingCode: raw.pairingCode } : {}),
    ...(raw.reason ? { reason: raw.reason } : {}),
    ...(raw.passkeyStep ? { passkeyStep: raw.passkeyStep as PasskeyStep } : {}),
    ...(raw.passkeyExpiresAt ? { passkeyExpiresAt: Number(raw.passkeyExpiresAt) } : {}),
    ...(raw.passkeyOptions ? { passkeyOptions: raw.passkeyOptions } : {}),
    ...(raw.passkeyCode ? { passkeyCode: raw.passkeyCode } : {}),
  };
}

/** Replaces whatever record the device had (called under the device's lease). */
export async function createPairing(
  redis: RedisClient,
  deviceId: string,
  rec: PairingRecord,
  ttlMs: number,
): Promise<void> {
  const key = keys.pairing(deviceId);
  const fields: Record<string, string> = {
    pairingId: rec.pairingId,
    owner: rec.owner,
    method: rec.method,
    phone: rec.phone,
    state: rec.state,
    startedAt: String(rec.startedAt),
  };
  await redis.multi().del(key).hset(key, fields).pexpire(key, ttlMs).exec();
}

/** Updates the record while it is still this pairing's; `ttlMs` 0 keeps the current TTL. */
export async function updatePairing(
  redis: RedisClient,
  deviceId: string,
  pairingId: string,
  fields: Partial<Record<keyof PairingRecord, string>>,
  ttlMs = 0,
): Promise<boolean> {
  const flat = Object.entries(fields).flatMap(([k, v]) => [k, String(v)]);
  return (await UPDATE_OWN.run(redis, [keys.pairing(deviceId)], [pairingId, String(ttlMs), ...flat])) === 1;
}
