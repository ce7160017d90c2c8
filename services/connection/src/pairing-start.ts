import { randomUUID } from 'node:crypto';
import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import { keys, type ConnectRequest } from '@mgw/contracts';
import {
  loadDeviceProxy,
  PairingSession,
  purgeAuthState,
  type Lease,
  type LeaseManager,
  type SandboxSocketOptions,
} from '@mgw/messenger';
import {
  PAIRING_ENDED_TTL_MS,
  createPairing,
  markLinked,
  passkeyContext,
  startWarmup,
  updatePairing,
  type Encryption,
  type PairingRecord,
  type SessionStore,
} from '@mgw/store';
import type { ConnectionConfig } from './config.js';
import { holdLease } from './lease-heartbeat.js';
import type { Liveness } from './liveness.js';

export interface PairingDeps {
  config: ConnectionConfig;
  logger: Logger;
  redis: RedisClient;
  /** Seals the pairing's credentials and keys at rest. */
  encryption: Encryption;
  leases: LeaseManager;
  sessions: SessionStore;
  liveness: Liveness;
  /** Whether a /disconnect of the device runs: a pairing starting meanwhile must not link it. */
  disconnecting: (deviceId: string) => Promise<boolean>;
  sandbox?: SandboxSocketOptions;
}

export interface LocalPairing {
  session: PairingSession;
  pairingId: string;
  /** Resolves once the setup (record, purge, socket) is done: a cancel waits for it. */
  ready: Promise<void>;
  /** Resolves when the pairing's clean-up (or hand-over) is done and its lease is released. */
  done: Promise<void>;
}

/** WhatsApp shows the first QR within a second or two; a pairing without one by then gives up. */
export const FIRST_CODE_TIMEOUT_MS = 30_000;
/** A passkey-gated pairing's record outlives its request by this much (its end is read from it). */
const PASSKEY_RECORD_SLACK_MS = 60_000;

/**
 * Opens a pairing socket under the device's lease and registers it in `local` (this replica's
 * pairings); returns once it is set up. Its QR / pairing code, and how it ended, go to the
 * pairing record, where every connect reads them.
 */
export async function startPairing(
  deps: PairingDeps,
  local: Map<string, LocalPairing>,
  req: ConnectRequest,
  lease: Lease,
): Promise<{ pairingId: string; startedAt: number }> {
  const { config, logger, redis, leases, sessions } = deps;
  const { deviceId } = req;
  const pairingId = randomUUID();
  const startedAt = Date.now();
  const log = logger.child({ deviceId, pairingId });

  let ended = false;
  let leaseLost = false;
  // The pairing socket goes through the device's proxy too (docs/proxies.md).
  const proxy = await loadDeviceProxy({
    redis,
    encryption: deps.encryption,
    deviceId,
    defaultProxy: config.messenger.defaultProxy,
    ...(deps.sandbox ? { ca: deps.sandbox.mediaCaPem } : {}),
  });
  const session = new PairingSession({
    redis,
    encryption: deps.encryption,
    ...(proxy ? { proxy } : {}),
    logger: log,
    deviceId,
    sandbox: deps.sandbox,
    messageRetentionSeconds: config.store.messageRetentionSeconds,
    epoch: () => (ended ? undefined : lease.epoch),
    method: req.method,
    phoneNumber: req.phoneNumber,
    qrMaxAttempts: config.qrMaxAttempts,
    passkeyContinuationTimeoutMs: config.passkeyContinuationTimeoutMs,
  });
  let setupDone!: () => void;
  const ready = new Promise<void>((resolve) => (setupDone = resolve));
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  local.set(deviceId, { session, pairingId, ready, done });
  const cancelLogged = (reason: string) =>
    session
      .cancel(reason)
      .catch((err: unknown) => log.warn('pairing not cancelled', { err: serializeError(err) }));
  const release = holdLease(leases, lease, config.messenger.lease.renewMs, log, () => {
    leaseLost = true;
    void ready.then(() => cancelLogged('lease_lost'));
  });
  let firstCodeTimer: NodeJS.Timeout | undefined;
  const show = (fields: Partial<Record<keyof PairingRecord, string>>) => {
    clearTimeout(firstCodeTimer);
    updatePairing(redis, deviceId, pairingId, { state: 'showing', ...fields }).catch((err: unknown) =>
      log.warn('pairing record not stored', { err: serializeError(err) }),
    );
  };
  session.on('qr', (qr) => show({ qr }));
  session.on('pairing-code', (pairingCode) => show({ pairingCode }));
  // A passkey-gated account (docs/passkeys.md): each step goes to the record (options and code
  // sealed), which lives as long as the request, and to the session (GET /status, its event).
  session.on('passkey', (state) => {
    clearTimeout(firstCodeTimer);
    const seal = (field: 'passkeyOptions' | 'passkeyCode', value: string) =>
      deps.encryption.sealText(value, passkeyContext(deviceId, field));
    const fields: Partial<Record<keyof PairingRecord, string>> = {
      state: 'showing',
      passkeyStep: state.step,
      passkeyExpiresAt: String(state.expiresAt),
      passkeyOptions: seal('passkeyOptions', JSON.stringify(state.options)),
      ...(state.code ? { passkeyCode: seal('passkeyCode', state.code) } : {}),
    };
    const ttl = Math.max(0, state.expiresAt - Date.now()) + PASSKEY_RECORD_SLACK_MS;
    void updatePairing(redis, deviceId, pairingId, fields, ttl)
      .then((own) => (own ? sessions.passkeyStep(deviceId, state.step, state.expiresAt) : undefined))
      .catch((err: unknown) => log.warn('passkey step not stored', { err: serializeError(err) }));
    log.info('passkey link step', { step: state.step, expiresAt: new Date(state.expiresAt).toISOString() });
  });
  const endLocal = async () => {
    clearTimeout(firstCodeTimer);
    await release();
    if (local.get(deviceId)?.session === session) local.delete(deviceId);
  };

  session.once('paired', (account) => {
    void (async () => {
      ended = true;
      await updatePairing(redis, deviceId, pairingId, { state: 'paired' }, PAIRING_ENDED_TTL_MS);
      await sessions.update(deviceId, 'connecting', { phone: account.phone, name: account.name });
      // A new link: its sending policy starts the warm-up today (docs/architecture.md, "Keeping accounts safe").
      await startWarmup(redis, deviceId);
      await markLinked(redis, deviceId);
      await endLocal();
      // The senders claim the device at once; the one that gets its lease opens the socket.
      await redis.publish(keys.devicesChannel(), deviceId);
      log.info('device linked; handed to the senders');
    })()
      .catch((err: unknown) => log.error('hand-over after pairing failed', { err: serializeError(err) }))
      .finally(finished);
  });
  session.once('failed', ({ reason }) => {
    void (async () => {
      // Unlinked leftovers (an unscanned identity) must not be mistaken for an account later.
      // No late creds.update may write after the purge: refuse every write from here on.
      ended = true;
      await purgeAuthState(redis, deviceId, lease.epoch).catch(() => false);
      await updatePairing(redis, deviceId, pairingId, { state: 'failed', reason }, PAIRING_ENDED_TTL_MS);
      // Lost the lease: the device (and its session record) belongs to its new holder now.
      if (!leaseLost) await sessions.markDisconnected(deviceId, reason);
      await endLocal();
      log.info('pairing ended without a link', { reason });
    })()
      .catch((err: unknown) => log.error('pairing cleanup failed', { err: serializeError(err) }))
      .finally(finished);
  });

  const ttlMs = (60 + 20 * config.qrMaxAttempts + 30) * 1000;
  try {
    await createPairing(
      redis,
      deviceId,
      {
        pairingId,
        owner: leases.owner,
        method: req.method,
        phone: req.phoneNumber ?? '',
        state: 'starting',
        startedAt,
      },
      ttlMs,
    );
    // A disconnect that began before this record existed could not see (and end) this pairing.
    if (await deps.disconnecting(deviceId)) {
      setupDone();
      await session.cancel('disconnect_requested');
      return { pairingId, startedAt };
    }
    // Leftovers of an earlier attempt that never linked: start from fresh credentials.
    await purgeAuthState(redis, deviceId, lease.epoch);
    await sessions.update(deviceId, 'connecting');
    await session.start();
    // Cancelled meanwhile (then no socket was opened, or it is closing): nothing to wait for.
    if (!ended) {
      log.info('pairing socket opened', { method: req.method });
      firstCodeTimer = setTimeout(
        () => void cancelLogged('no QR / pairing code from WhatsApp in time'),
        FIRST_CODE_TIMEOUT_MS,
      );
    }
  } catch (err) {
    log.warn('pairing socket not started', { err: serializeError(err) });
    setupDone();
    await session.cancel('socket_failed');
  } finally {
    setupDone();
  }
  return { pairingId, startedAt };
}
