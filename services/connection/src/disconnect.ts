import { randomUUID } from 'node:crypto';
import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import { CONNECTION_MESSAGES, ERRORS, FAILURE_REASONS, type ConnectionReply } from '@mgw/contracts';
import {
  DeviceSocket,
  hasLinkedCredentials,
  purgeAuthState,
  type Lease,
  type LeaseManager,
  type SandboxSocketOptions,
} from '@mgw/messenger';
import {
  DeviceCommandClient,
  forgetAccount,
  NOBODY_HOLDS_DEVICE,
  openSendQueue,
  purgeDeviceMessages,
  type Encryption,
  type MessageStore,
  type SessionStore,
  markLinked,
  markUnlinked,
} from '@mgw/store';
import type { ConnectionConfig } from './config.js';
import { holdLease } from './lease-heartbeat.js';

export interface DisconnectDeps {
  config: ConnectionConfig;
  logger: Logger;
  redis: RedisClient;
  /** Template for the BLPOP connections (one duplicate per wait for an owner's reply). */
  blocking: RedisClient;
  bullConnection: RedisClient;
  leases: LeaseManager;
  sessions: SessionStore;
  messages: MessageStore;
  encryption: Encryption;
  sandbox?: SandboxSocketOptions;
}

const OWNER_REPLY_TIMEOUT_S = 15;
/** The API waits CONNECTION_REPLY_TIMEOUT_MS for the answer: give up (503) a little before it does. */
const ANSWER_MARGIN_MS = 5000;
const MIN_OVERALL_MS = 5000;
/** A request taken up late still gets one short try (a free lease, an owner that answers at once). */
const LATE_TRY_MS = 1000;

/**
 * Logs a device out on WhatsApp. The live socket belongs to whichever sender holds the lease, so:
 * take the device off the linked set (no new claims), then either the lease is free — this
 * service takes it, opens a socket with the stored credentials and logs out itself — or a sender
 * holds it — ask it over pub/sub and wait for its reply on a list. A holder that does not answer
 * (it died) loses its lease within the TTL and the loop takes it. The loop ends (503) a little
 * before the API stops waiting for this answer, so the client learns the logout did not happen.
 */
export async function disconnectDevice(
  deviceId: string,
  deps: DisconnectDeps,
  /** When the API stops waiting (the request's `expiresAt`): the loop ends a margin before it. */
  answerBy?: number,
): Promise<ConnectionReply> {
  const { redis, leases, logger } = deps;
  const log = logger.child({ deviceId });
  if (!(await hasLinkedCredentials(redis, deviceId, deps.encryption))) {
    await markUnlinked(redis, deviceId);
    const session = await deps.sessions.get(deviceId);
    if (session.status !== 'disconnected')
      await deps.sessions.markDisconnected(deviceId, 'disconnect_requested');
    return { success: true, message: CONNECTION_MESSAGES.alreadyDisconnected };
  }
  await markUnlinked(redis, deviceId);
  const owner = new DeviceCommandClient(redis, deps.blocking);
  let loggedOut = false;
  try {
    const deadline = giveUpAt(deps.config.connectionReplyTimeoutMs, answerBy);
    while (Date.now() < deadline) {
      const lease = await leases.acquire(deviceId);
      if (lease) {
        await logoutHere(deviceId, lease, deps);
        loggedOut = true;
        log.info('device logged out by the connection service');
        return { success: true, message: CONNECTION_MESSAGES.disconnected };
      }
      const remainingS = Math.ceil((deadline - Date.now()) / 1000);
      const answer = await owner.ask(
        { type: 'logout', deviceId, requestId: randomUUID() },
        Math.max(1, Math.min(OWNER_REPLY_TIMEOUT_S, remainingS)),
      );
      // Nobody holds it (any more): the loop takes the lease next.
      const reply = answer === NOBODY_HOLDS_DEVICE ? undefined : answer;
      if (reply?.ok) {
        loggedOut = true;
        log.info('device logged out by its sender');
        return { success: true, message: CONNECTION_MESSAGES.disconnected };
      }
      if (reply && !reply.ok) log.warn('owner could not log out', { error: reply.error });
      if (!(await hasLinkedCredentials(redis, deviceId, deps.encryption))) {
        loggedOut = true;
        return { success: true, message: CONNECTION_MESSAGES.disconnected };
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    return {
      success: false,
      error: ERRORS.logoutIncomplete,
      httpStatus: 503,
    };
  } finally {
    // Timed out or threw (a Redis blip, the logout failing): while the credentials are still valid
    // a sender must keep serving the device, so it goes back in the linked set.
    if (!loggedOut) await relink(deviceId, deps, log);
  }
}

/**
 * When the loop gives up: the API's wait less the margin, counted from when the API sent the
 * request (`answerBy`) — a request taken up late (the workers busy, Redis failing over) must not
 * be answered after the API has answered 504 — and never sooner than one short try.
 */
function giveUpAt(replyTimeoutMs: number, answerBy?: number): number {
  const now = Date.now();
  const byConfig = now + Math.max(MIN_OVERALL_MS, replyTimeoutMs - ANSWER_MARGIN_MS);
  if (answerBy === undefined || !Number.isFinite(answerBy)) return byConfig;
  return Math.max(now + LATE_TRY_MS, Math.min(byConfig, answerBy - ANSWER_MARGIN_MS));
}

async function relink(deviceId: string, deps: DisconnectDeps, log: DisconnectDeps['logger']): Promise<void> {
  try {
    if (await hasLinkedCredentials(deps.redis, deviceId, deps.encryption))
      await markLinked(deps.redis, deviceId);
  } catch (err) {
    log.error('could not put the device back in the linked set', { err: serializeError(err) });
  }
}

/** No sender holds the device: log out with a socket of our own, under the lease. */
async function logoutHere(deviceId: string, lease: Lease, deps: DisconnectDeps): Promise<void> {
  const { config, redis, logger } = deps;
  const log = logger.child({ deviceId });
  let lost = false;
  const conn = new DeviceSocket({
    redis,
    encryption: deps.encryption,
    logger: log,
    deviceId,
    sandbox: deps.sandbox,
    messageRetentionSeconds: config.store.messageRetentionSeconds,
    epoch: () => (lost ? undefined : lease.epoch),
  });
  const release = holdLease(deps.leases, lease, config.messenger.lease.renewMs, log, () => {
    lost = true;
    conn.stop().catch((err: unknown) => log.warn('socket not closed', { err: serializeError(err) }));
  });
  try {
    await conn.start();
    if (await conn.waitForOpen(20_000)) await conn.logout();
    else {
      // Refused (401: already unlinked on the phone) or unreachable: the credentials are useless
      // to us either way once the user asked to disconnect; WhatsApp expires the companion.
      log.warn('could not open a socket to log out; removing the credentials anyway');
      await conn.stop();
    }
    // Baileys may still save creds after the close; a write landing after the purge would bring
    // them back, so from here on every auth-state write of this socket is refused.
    lost = true;
    await purgeAuthState(redis, deviceId, lease.epoch);
    // What the account kept (chats, pause, blocklist, labels, channels) is not the next account's:
    // the same purge as the holder's retire.
    await forgetAccount(redis, deviceId);
    await deps.sessions.markDisconnected(deviceId, 'logged_out');
    await failWaitingJobs(deviceId, deps);
  } finally {
    await release();
  }
}

/**
 * Ends — with a reason, not silently — every message still waiting on the device's queue (their
 * records `failed` / `logged_out`) and starts a new link generation, so none of them is ever sent.
 */
export async function failWaitingJobs(
  deviceId: string,
  deps: Pick<DisconnectDeps, 'redis' | 'bullConnection' | 'messages' | 'logger'>,
  timeoutMs = 30_000,
): Promise<number> {
  const queue = openSendQueue(deps.bullConnection, deviceId);
  queue.on('error', (err) => deps.logger.warn('send queue error', { deviceId, err: serializeError(err) }));
  try {
    return await purgeDeviceMessages(
      { redis: deps.redis, queue, messages: deps.messages },
      deviceId,
      FAILURE_REASONS.loggedOut,
      timeoutMs,
    );
  } finally {
    await queue.close().catch(() => undefined);
  }
}
