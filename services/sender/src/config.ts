import Joi from 'joi';
import {
  cloudConfig,
  cloudEnv,
  outboundConfig,
  outboundEnv,
  validateEnv,
  type CloudConfig,
  type ConfigRule,
  type OutboundConfig,
} from '@mgw/common';
import {
  MESSENGER_SERVICE_ENV,
  messengerRules,
  messengerServiceConfig,
  type MessengerServiceConfig,
} from '@mgw/messenger';
import { SEND_POLICY_ENV, sendPolicyConfig, type SendPolicyConfig } from '@mgw/store';

const senderEnv: Joi.PartialSchemaMap = {
  SEND_MIN_GAP_MS: Joi.number().integer().min(0).default(1000),
  SEND_GAP_JITTER_MS: Joi.number().integer().min(0).default(500),
  MEDIA_FETCH_TIMEOUT_MS: Joi.number().integer().min(100).default(20_000),
  LEASE_SCAN_MS: Joi.number().integer().min(200).default(3000),
  SENDER_LIVENESS_TTL_MS: Joi.number().integer().min(1000).default(3000),
  SEND_RESTRICTION_BACKOFF_MS: Joi.number()
    .integer()
    .min(1000)
    .default(60 * 60_000),
  SEND_RATE_LIMIT_BACKOFF_MS: Joi.number()
    .integer()
    .min(1000)
    .default(15 * 60_000),
  SEND_FAILURE_RUN: Joi.number().integer().min(0).default(5),
  SEND_FAILURE_BACKOFF_MS: Joi.number()
    .integer()
    .min(1000)
    .default(5 * 60_000),
  SENDER_MAX_DEVICES: Joi.number().integer().min(0).default(0),
  SENDER_REBALANCE_COOLDOWN_MS: Joi.number().integer().min(0).default(60_000),
  SENDER_HEAP_GROWING_PERCENT: Joi.number().integer().min(0).max(300).default(0),
  MESSAGE_RETRY_MAX: Joi.number().integer().min(1).max(50).default(5),
  HISTORY_SYNC_MAX_MESSAGES: Joi.number().integer().min(0).max(100_000).default(1000),
  HISTORY_SYNC_MAX_BYTES: Joi.number()
    .integer()
    .min(64 * 1024)
    .max(256 * 1024 * 1024)
    .default(32 * 1024 * 1024),
  CONTACT_CACHE_TTL_SECONDS: Joi.number()
    .integer()
    .min(60)
    .default(7 * 24 * 3600),
  // Socket opens admitted a second (0 = no bound): docs/operations.md, "Restarts without a storm".
  CONNECT_RATE_PER_SENDER: Joi.number().min(0).default(10),
  CONNECT_BURST_PER_SENDER: Joi.number().integer().min(1).default(10),
  CONNECT_RATE_PER_HOST: Joi.number().min(0).default(20),
  CONNECT_BURST_PER_HOST: Joi.number().integer().min(1).default(20),
  CONNECT_RATE_SCOPE: Joi.string()
    .pattern(/^[A-Za-z0-9._-]{1,100}$/)
    .default('gateway'),
};

export interface SenderConfig extends MessengerServiceConfig {
  /** How often unowned linked devices are looked for (with jitter). */
  leaseScanMs: number;
  /**
   * A sender that stopped beating its liveness this long ago is dead: its devices are taken over
   * before their leases run out (beats every twelfth of it, from the lease-renewer thread).
   */
  livenessTtlMs: number;
  /** Minimum gap between two messages of one device (0 disables pacing). */
  sendMinGapMs: number;
  sendGapJitterMs: number;
  /** At most this many devices in this process, whatever the fair share says (0 = no cap). */
  maxDevices: number;
  /** After giving devices away, this sender gives none again for this long (no ping-pong). */
  rebalanceCooldownMs: number;
  /** The old generation grows at most this % past the last full collection's survivors (0 = V8's choice). */
  heapGrowingPercent: number;
  mediaFetchTimeoutMs: number;
  /** How long a contact lookup's answer is kept (the number check and the sends read it). */
  contactCacheTtlSeconds: number;
  /**
   * Retry receipts answered per message (its recipient could not decrypt it); the ask that
   * reaches it marks a message still `sent` undecryptable (Baileys' maxMsgRetryCount: 5).
   */
  messageRetryMax: number;
  /** History sync at link time (a device's `historySync` setting): its bounds. */
  history: { maxMessages: number; maxBytes: number };
  /** Which private hosts attachment URLs may point at (none by default). */
  outbound: OutboundConfig;
  /** Caps, warm-up, quiet hours: defaults of every device (see libs/store/src/policy/config.ts). */
  sendPolicy: SendPolicyConfig;
  backoff: BackoffConfig;
  connect: ConnectRateConfig;
  /** Where the Cloud API engine reaches Meta's Graph API (the simulator's in the sandbox and tests). */
  cloud: CloudConfig;
}

/** How fast device sockets may open (a restart without a storm; docs/operations.md). */
export interface ConnectRateConfig {
  /** This sender's bucket (ratePerSecond 0 = no bound). */
  perSender: { ratePerSecond: number; burst: number };
  /** The bucket in Redis shared by every sender of `scope` (ratePerSecond 0 = no bound). */
  perHost: { ratePerSecond: number; burst: number };
  /** Which senders share the host bucket: the same value in each (`gateway`: the whole install). */
  scope: string;
}

/** How long a device pauses on a server signal that names no end. */
export interface BackoffConfig {
  /** Ack 463 with no reach-out lock and no new-chat cycle end. */
  restrictionMs: number;
  /** Ack 429 (rate-overlimit). */
  rateLimitMs: number;
  /** This many failed sends in a row pause the device (0 = never)... */
  failureRun: number;
  /** ...for this long. */
  failureMs: number;
}

/** A liveness as long as the lease would never take a device over before the lease lapses. */
const livenessRule: ConfigRule = (e) =>
  e.SENDER_LIVENESS_TTL_MS >= e.LEASE_TTL_MS
    ? `SENDER_LIVENESS_TTL_MS (${e.SENDER_LIVENESS_TTL_MS}) must be below LEASE_TTL_MS (${e.LEASE_TTL_MS})`
    : undefined;

/** Every environment variable this service reads, by schema piece. */
export const SENDER_ENV = [...MESSENGER_SERVICE_ENV, outboundEnv, cloudEnv, SEND_POLICY_ENV, senderEnv];

export function loadSenderConfig(env: NodeJS.ProcessEnv = process.env): SenderConfig {
  const e = validateEnv(SENDER_ENV, env, [...messengerRules, livenessRule]);
  return {
    ...messengerServiceConfig(e),
    leaseScanMs: e.LEASE_SCAN_MS,
    livenessTtlMs: e.SENDER_LIVENESS_TTL_MS,
    sendMinGapMs: e.SEND_MIN_GAP_MS,
    sendGapJitterMs: e.SEND_GAP_JITTER_MS,
    mediaFetchTimeoutMs: e.MEDIA_FETCH_TIMEOUT_MS,
    maxDevices: e.SENDER_MAX_DEVICES,
    rebalanceCooldownMs: e.SENDER_REBALANCE_COOLDOWN_MS,
    heapGrowingPercent: e.SENDER_HEAP_GROWING_PERCENT,
    contactCacheTtlSeconds: e.CONTACT_CACHE_TTL_SECONDS,
    messageRetryMax: e.MESSAGE_RETRY_MAX,
    history: { maxMessages: e.HISTORY_SYNC_MAX_MESSAGES, maxBytes: e.HISTORY_SYNC_MAX_BYTES },
    outbound: outboundConfig(e),
    sendPolicy: sendPolicyConfig(e),
    backoff: {
      restrictionMs: e.SEND_RESTRICTION_BACKOFF_MS,
      rateLimitMs: e.SEND_RATE_LIMIT_BACKOFF_MS,
      failureRun: e.SEND_FAILURE_RUN,
      failureMs: e.SEND_FAILURE_BACKOFF_MS,
    },
    connect: {
      perSender: { ratePerSecond: e.CONNECT_RATE_PER_SENDER, burst: e.CONNECT_BURST_PER_SENDER },
      perHost: { ratePerSecond: e.CONNECT_RATE_PER_HOST, burst: e.CONNECT_BURST_PER_HOST },
      scope: e.CONNECT_RATE_SCOPE,
    },
    cloud: cloudConfig(e),
  };
}
