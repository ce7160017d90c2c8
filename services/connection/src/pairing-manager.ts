import type { Redis } from 'ioredis';
import { serializeError, type Logger } from '@mgw/common';
import { ERRORS, keys, type ConnectRequest, type ConnectionReply } from '@mgw/contracts';
import {
  PairingSession,
  purgeAuthState,
  qrToDataUrl,
  type LeaseManager,
  type SandboxSocketOptions,
} from '@mgw/messenger';
import type { Encryption, SessionStore } from '@mgw/store';
import type { ConnectionConfig } from './config.js';
import { holdLease } from './lease-heartbeat.js';

export interface PairingDeps {
  config: ConnectionConfig;
  logger: Logger;
  redis: Redis;
  encryption: Encryption;
  leases: LeaseManager;
  sessions: SessionStore;
  sandbox?: SandboxSocketOptions;
}

/** The pairing record lives a little longer than the longest pairing (60 s + 20 s per refresh). */
const FIRST_CODE_TIMEOUT_MS = 30_000;

/** Deletes the pairing record only while it is this process's (another replica may have a new one). */
const DELETE_OWN_RECORD = `
if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

interface LocalPairing {
  session: PairingSession;
  method: ConnectRequest['method'];
  /** Resolves when the pairing's clean-up (or hand-over) is done and its lease is released. */
  done: Promise<void>;
}

/**
 * Pairing sockets of this replica. The current QR / pairing code is kept in Redis
 * (`keys.pairing`), so a second connect — on any replica — answers with it instead of
 * opening a second socket. The pairing socket holds the device's lease while it writes the auth
 * state and gives it up for the senders once the phone linked.
 */
export class PairingManager {
  private readonly local = new Map<string, LocalPairing>();

  constructor(private readonly deps: PairingDeps) {}

  get active(): number {
    return this.local.size;
  }

  /** A connect request when the device is not linked (or forceNew wiped it). */
  async connect(req: ConnectRequest): Promise<ConnectionReply> {
    const { redis, leases } = this.deps;
    const key = keys.pairing(req.deviceId);
    if (req.forceNew) await this.cancel(req.deviceId, 'force_new');
    const current = await redis.hgetall(key);
    if (current.method) {
      // A record whose pairing socket is gone (its replica died) is stale: its QR links nothing.
      const holder = await leases.current(req.deviceId);
      if (holder?.owner !== current.owner) {
        await redis.del(key);
        return this.start(req);
      }
      const local = this.local.has(req.deviceId);
      if (!local && req.forceNew) {
        return {
          success: false,
          error: ERRORS.pairingOnOtherReplica,
          httpStatus: 409,
        };
      }
      if (current.method === req.method && (current.qr || current.pairingCode))
        return this.reply(req, current);
      if (!local) {
        return {
          success: false,
          error: ERRORS.pairingOtherMethod,
          httpStatus: 409,
        };
      }
      await this.cancel(req.deviceId, 'method_changed');
    }
    return this.start(req);
  }

  /** Ends this replica's pairing of a device, if any. */
  async cancel(deviceId: string, reason: string): Promise<boolean> {
    const p = this.local.get(deviceId);
    if (!p) return false;
    await p.session.cancel(reason);
    // The next pairing must not start before this one's clean-up deleted its record and lease.
    await p.done;
    return true;
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.local.keys()].map((id) => this.cancel(id, 'shutdown')));
  }

  private async start(req: ConnectRequest): Promise<ConnectionReply> {
    const { config, logger, redis, leases, sessions } = this.deps;
    const { deviceId } = req;
    const log = logger.child({ deviceId });
    // A crashed replica's pairing lease runs out within its TTL; wait for it rather than fail.
    const lease = await leases.acquireWithin(deviceId, config.messenger.lease.ttlMs + 1000);
    if (!lease)
      return {
        success: false,
        error: ERRORS.deviceBusy,
        httpStatus: 409,
      };

    let ended = false;
    let leaseLost = false;
    const session = new PairingSession({
      redis,
      encryption: this.deps.encryption,
      logger: log,
      deviceId,
      sandbox: this.deps.sandbox,
      messageRetentionSeconds: config.store.messageRetentionSeconds,
      epoch: () => (ended ? undefined : lease.epoch),
      method: req.method,
      phoneNumber: req.phoneNumber,
      qrMaxAttempts: config.qrMaxAttempts,
    });
    const release = holdLease(leases, lease, config.messenger.lease.renewMs, log, () => {
      leaseLost = true;
      session
        .cancel('lease_lost')
        .catch((err: unknown) => log.warn('pairing not cancelled', { err: serializeError(err) }));
    });
    let finished!: () => void;
    const done = new Promise<void>((resolve) => (finished = resolve));
    this.local.set(deviceId, { session, method: req.method, done });
    const pairingKey = keys.pairing(deviceId);
    const ttlSeconds = 60 + 20 * config.qrMaxAttempts + 30;

    const first = new Promise<Record<string, string> | { failed: string }>((resolve) => {
      const timer = setTimeout(
        () => resolve({ failed: 'no QR / pairing code from WhatsApp in time' }),
        FIRST_CODE_TIMEOUT_MS,
      );
      const store = async (fields: Record<string, string>) => {
        await redis.multi().hset(pairingKey, fields).expire(pairingKey, ttlSeconds).exec();
        clearTimeout(timer);
        resolve(fields);
      };
      const storeLogged = (fields: Record<string, string>) =>
        store(fields).catch((err: unknown) =>
          log.warn('pairing record not stored', { err: serializeError(err) }),
        );
      session.on('qr', (qr) => void storeLogged({ method: req.method, qr, owner: leases.owner }));
      session.on(
        'pairing-code',
        (code) => void storeLogged({ method: req.method, pairingCode: code, owner: leases.owner }),
      );
      session.once('failed', ({ reason }) => {
        clearTimeout(timer);
        resolve({ failed: reason });
      });
    });

    session.once('paired', (account) => {
      void (async () => {
        ended = true;
        await redis.del(pairingKey);
        await sessions.update(deviceId, 'connecting', { phone: account.phone, name: account.name });
        await redis.sadd(keys.linkedDevices(), deviceId);
        await release();
        if (this.local.get(deviceId)?.session === session) this.local.delete(deviceId);
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
        await redis.eval(DELETE_OWN_RECORD, 1, pairingKey, leases.owner);
        // Lost the lease: the device (and its session record) belongs to its new holder now.
        if (!leaseLost) await sessions.markDisconnected(deviceId, reason);
        await release();
        if (this.local.get(deviceId)?.session === session) this.local.delete(deviceId);
        log.info('pairing ended without a link', { reason });
      })()
        .catch((err: unknown) => log.error('pairing cleanup failed', { err: serializeError(err) }))
        .finally(finished);
    });

    // Leftovers of an earlier attempt that never linked: start from fresh credentials.
    await purgeAuthState(redis, deviceId, lease.epoch);
    await sessions.update(deviceId, 'connecting');
    try {
      await session.start();
    } catch (err) {
      await session.cancel('socket_failed');
      throw err;
    }
    const got = await first;
    if ('failed' in got) {
      await session.cancel(String(got.failed));
      return { success: false, error: ERRORS.pairingNotStartedPrefix + got.failed, httpStatus: 503 };
    }
    return this.reply(req, got);
  }

  private async reply(req: ConnectRequest, current: Record<string, string>): Promise<ConnectionReply> {
    if (req.method === 'pairingCode') {
      return { success: true, status: 'connecting', pairingCode: current.pairingCode };
    }
    const qr = current.qr ?? '';
    return { success: true, status: 'connecting', qrCode: req.rawQrCode ? qr : await qrToDataUrl(qr) };
  }
}
