import { randomUUID } from 'node:crypto';
import { isClusterClient, type RedisClient } from '@mgw/common';
import {
  CONNECTION_LIVENESS,
  keys,
  passkeyCommandContext,
  type ConnectionCommand,
  type PasskeyAssertion,
  type PasskeyStep,
} from '@mgw/contracts';
import {
  LivenessSet,
  awaitCommandReply,
  isPairingRunning,
  passkeyContext,
  readPairing,
  type PairingRecord,
} from '@mgw/store';
import type { ApiServices } from '../../api-services.js';

/*
 * A passkey-gated link (docs/passkeys.md), as the API sees it: the device's pairing record says
 * where it stands (its step, when its request expires, the request's options and the phone's code,
 * sealed); what the operator hands in goes to the connection replica that runs the pairing
 * (`keys.connectionCommands()`), which answers on `keys.commandReply(requestId)`.
 */

/** How long the API waits for the pairing's replica: two WhatsApp round trips, and room. */
const REPLY_WAIT_SECONDS = 20;

/** A passkey-gated link as GET /connect/passkey answers it. */
export interface PasskeyView {
  step: PasskeyStep;
  /** When the request expires (ISO). */
  expiresAt: string;
  /** The WebAuthn request options (`PublicKeyCredentialRequestOptionsJSON`): what the browser asserts. */
  requestOptions: Record<string, unknown>;
  /** The code the phone shows, from `confirm_code` on. */
  code?: string;
}

type PasskeyDeps = Pick<ApiServices, 'redis' | 'bullRedis' | 'encryption'>;

/**
 * The device's pairing record while a passkey-gated link runs in it: its replica alive (a replica
 * killed mid-ceremony leaves the record until it expires, up to the request's 600 s and more).
 */
async function livePasskeyRecord(redis: RedisClient, deviceId: string): Promise<PairingRecord | undefined> {
  const rec = await readPairing(redis, deviceId);
  if (!isPairingRunning(rec) || !rec.passkeyStep) return undefined;
  const replicas = new LivenessSet(redis, {
    key: keys.connectionWorkers(),
    ttlMs: CONNECTION_LIVENESS.ttlMs,
    forgetMs: 1,
  });
  return (await replicas.isAlive(rec.owner)) ? rec : undefined;
}

/** Whether a passkey-gated link of the device runs now (GET /status shows it only then). */
export async function passkeyLinkRuns(redis: RedisClient, deviceId: string): Promise<boolean> {
  return (await livePasskeyRecord(redis, deviceId)) !== undefined;
}

/** The device's passkey-gated link, if its pairing waits on one now. */
export async function readPasskey(s: PasskeyDeps, deviceId: string): Promise<PasskeyView | undefined> {
  const rec = await livePasskeyRecord(s.redis, deviceId);
  if (!rec?.passkeyStep || !rec.passkeyOptions || !rec.passkeyExpiresAt) return undefined;
  const open = (field: 'passkeyOptions' | 'passkeyCode', sealed: string) =>
    s.encryption.openText(sealed, passkeyContext(deviceId, field));
  return {
    step: rec.passkeyStep,
    expiresAt: new Date(rec.passkeyExpiresAt).toISOString(),
    requestOptions: JSON.parse(open('passkeyOptions', rec.passkeyOptions)) as Record<string, unknown>,
    ...(rec.passkeyCode ? { code: open('passkeyCode', rec.passkeyCode) } : {}),
  };
}

/** What the operator hands in: the assertion, or the confirmation of the code. */
export type PasskeyInput = { assertion: PasskeyAssertion } | { code: string };

/** How handing it in went. */
export type PasskeyOutcome =
  /** Taken: the link moved on (its step now). */
  | { kind: 'taken'; passkey: PasskeyView | undefined }
  /** No passkey request waits on this device's pairing. */
  | { kind: 'none' }
  /** The link is at another step (e.g. a confirmation before the code is known). */
  | { kind: 'wrong_step'; step: PasskeyStep }
  /** Not this request's (another challenge, another code): `why`. */
  | { kind: 'invalid'; why: string }
  /** WhatsApp refused the assertion: the attempt ended (`passkey_rejected`). */
  | { kind: 'rejected' }
  /** The pairing's replica is gone, did not answer in time, or failed. */
  | { kind: 'unavailable' | 'timeout' | 'failed' };

/** Hands the assertion (or the code's confirmation) to the replica that runs the device's pairing. */
export async function handPasskey(
  s: PasskeyDeps,
  deviceId: string,
  input: PasskeyInput,
): Promise<PasskeyOutcome> {
  const rec = await livePasskeyRecord(s.redis, deviceId);
  if (!rec?.passkeyStep) return { kind: 'none' };
  const wanted: PasskeyStep = 'assertion' in input ? 'assertion' : 'confirm_code';
  if (rec.passkeyStep !== wanted) return { kind: 'wrong_step', step: rec.passkeyStep };
  const requestId = randomUUID();
  const base = { deviceId, pairingId: rec.pairingId, requestId };
  const command: ConnectionCommand =
    'assertion' in input
      ? {
          ...base,
          type: 'passkey-assertion',
          sealed: s.encryption.sealText(JSON.stringify(input.assertion), passkeyCommandContext(requestId)),
        }
      : { ...base, type: 'passkey-confirm', code: input.code };
  const heard = await s.redis.publish(keys.connectionCommands(), JSON.stringify(command));
  // On one server 0 proves no replica listens (on a Cluster the count is one node's: it proves nothing).
  if (heard === 0 && !isClusterClient(s.redis)) return { kind: 'unavailable' };
  const reply = await awaitCommandReply(s.bullRedis, requestId, REPLY_WAIT_SECONDS);
  if (!reply) return { kind: 'timeout' };
  if (reply.ok) return { kind: 'taken', passkey: await readPasskey(s, deviceId) };
  const error = reply.error ?? 'failed';
  if (error.startsWith('invalid:')) return { kind: 'invalid', why: error.slice('invalid:'.length) };
  if (error === 'wrong_step') {
    const now = await readPairing(s.redis, deviceId);
    return now?.passkeyStep ? { kind: 'wrong_step', step: now.passkeyStep } : { kind: 'none' };
  }
  if (error === 'rejected') return { kind: 'rejected' };
  return { kind: 'failed' };
}
