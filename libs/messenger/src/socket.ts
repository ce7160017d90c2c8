import type { Agent } from 'node:https';
import { sameUser } from '@mgw/contracts';
import {
  makeWASocket,
  type BinaryNode,
  type UserFacingSocketConfig,
  type WASocket,
} from '@whiskeysockets/baileys';
import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import type { Encryption } from '@mgw/store';
import type { RedisAuthState } from './auth-state.js';
import { baileysLogger } from './baileys-logger.js';
import { MessageProtoStore } from './message-proto-store.js';
import type { DeviceProxyAgent } from './proxy.js';
import { RetryAnswers, type RetryHooks } from './retry-answers.js';
import type { SandboxSocketOptions } from './sandbox.js';

export type { WASocket };

/** What every socket of a device needs, whoever opens it (pairing, sender, logout). */
export interface SocketContext {
  redis: RedisClient;
  /** Seals the auth state and the stored message protos. */
  encryption: Encryption;
  logger: Logger;
  deviceId: string;
  /** Present only in sandbox mode (MESSENGER_SANDBOX_URL). */
  sandbox?: SandboxSocketOptions;
  messageRetentionSeconds: number;
  /**
   * The device's proxy, when it has one: the WebSocket and media uploads go through it, and no
   * other device's connection does (each device has its own agent).
   */
  proxy?: DeviceProxyAgent;
  /**
   * How retry receipts for our messages are answered (retry-answers.ts); without it, Baileys'
   * own way (its in-memory caps, its recent-message cache).
   */
  retries?: RetryHooks;
}

/**
 * One-time pre-keys the account keeps on WhatsApp's server: 50 uploaded at link, and when the
 * server says fewer than 5 are left (its `encrypt` notification, or the count asked at login) it
 * is topped up to 50 again. whatsmeow's `WantedPreKeyCount = 50` / `MinPreKeyCount = 5`
 * (prekeys.go; its `handleEncryptNotification` in notification.go uploads when the count is below
 * the minimum). Baileys uploads 812 at link (INITIAL_PREKEY_COUNT, as WhatsApp Web does, and
 * whatsmeow since Nov 2025 for its first upload only) and 5 per refill: each private half is kept in
 * Redis until a contact uses it, ~290 KiB per account for keys most accounts never hand out.
 */
export const PRE_KEYS_WANTED = 50;

/**
 * Creates a Baileys socket over the Redis auth state. Baileys' own history sync is off: with it on,
 * Baileys holds events back while it waits for the initial sync; the gateway reads history
 * notifications itself when a device keeps its history (history-sync.ts).
 */
export function createSocket(
  ctx: SocketContext,
  auth: RedisAuthState,
  extra: Pick<UserFacingSocketConfig, 'qrTimeout' | 'cachedGroupMetadata'> = {},
): WASocket {
  const protos = new MessageProtoStore(ctx.redis, ctx.deviceId, ctx.messageRetentionSeconds, ctx.encryption);
  const log = baileysLogger(ctx.logger, { deviceId: ctx.deviceId });
  const isOwn = (jid: string): boolean => {
    const me = auth.state.creds.me;
    return !!me && (sameUser(jid, me.id) || sameUser(jid, me.lid));
  };
  const answers = ctx.retries ? new RetryAnswers(ctx.retries, ctx.logger, ctx.deviceId, isOwn) : undefined;
  const load = (id: string) => protos.load(id);
  const config: UserFacingSocketConfig = {
    auth: auth.state,
    logger: log,
    shouldSyncHistoryMessage: () => false,
    syncFullHistory: false,
    markOnlineOnConnect: false,
    fireInitQueries: true,
    initialPreKeyCount: PRE_KEYS_WANTED,
    wantedPreKeyCount: PRE_KEYS_WANTED,
    getMessage: async (key) =>
      !key.id ? undefined : answers ? answers.getMessage(key.id, load) : load(key.id),
    ...(answers
      ? {
          // every retry through getMessage (the stored proto), before and after a restart alike
          enableRecentMessageCache: false,
          msgRetryCounterCache: answers.counterCache,
          patchMessageBeforeSending: (message) => answers.patch(message),
        }
      : {}),
    ...(ctx.sandbox
      ? { waWebSocketUrl: ctx.sandbox.waWebSocketUrl, fetchAgent: ctx.sandbox.fetchAgent }
      : {}),
    // The proxy's agent carries the sandbox's media CA itself (see createProxyAgent).
    ...(ctx.proxy ? { agent: ctx.proxy.agent as Agent, fetchAgent: ctx.proxy.agent as Agent } : {}),
    ...extra,
  };
  const sock = makeWASocket(config);
  // Seen before Baileys' own `CB:receipt` handler runs (its getMessage then waits for the decision).
  if (answers) sock.ws.on('CB:receipt,type:retry', (node: BinaryNode) => answers.onRetryReceipt(node));
  sock.ev.on('creds.update', () => {
    // A refused (fenced) write already told the owner through onFenced; a missing lease
    // (LeaseMissingError) is retried by the next creds.update, which saves the whole creds again.
    auth.saveCreds().catch((err: unknown) => {
      ctx.logger.warn('credentials not saved', { deviceId: ctx.deviceId, err: serializeError(err) });
    });
  });
  return sock;
}
