import Joi from 'joi';
import {
  cloudConfig,
  cloudEnv,
  opsConfig,
  opsEnv,
  webhookOutboundConfig,
  webhookOutboundEnv,
  redisConfig,
  redisEnv,
  runtimeConfig,
  runtimeEnv,
  validateEnv,
  type CloudConfig,
  type ConfigRule,
  type OpsConfig,
  type WebhookOutboundConfig,
  type RedisConfig,
  type RuntimeConfig,
} from '@mgw/common';
import { DEVICE_ID_PATTERN, EVENT_LOG_RETENTION_HOURS_DEFAULT, RATE_LIMITS } from '@mgw/contracts';
import {
  encryptionConfig,
  encryptionEnv,
  SEND_POLICY_ENV,
  sendPolicyConfig,
  HEALTH_LOW_SCORE,
  WORKSPACE_CEILINGS,
  storeConfig,
  storeEnv,
  type EncryptionConfig,
  type SendPolicyConfig,
  type StoreConfig,
  type WorkspaceCeilings,
} from '@mgw/store';

const limit = (spec: number) => Joi.number().integer().min(1).default(spec);

const apiEnv: Joi.PartialSchemaMap = {
  PORT: Joi.number().port().default(3000),
  TRUST_PROXY: Joi.alternatives()
    .try(Joi.boolean(), Joi.number().integer().min(0), Joi.string())
    .default(false),
  DEFAULT_DEVICE_ID: Joi.string().pattern(DEVICE_ID_PATTERN).default('default'),
  RATE_LIMIT_WINDOW_MS: Joi.number().integer().min(1000).default(60_000),
  RATE_LIMIT_CONNECT: limit(RATE_LIMITS.connect),
  RATE_LIMIT_DISCONNECT: limit(RATE_LIMITS.disconnect),
  RATE_LIMIT_STATUS: limit(RATE_LIMITS.status),
  RATE_LIMIT_SEND: limit(RATE_LIMITS.send),
  RATE_LIMIT_OTP: limit(RATE_LIMITS.otp),
  RATE_LIMIT_MESSAGES: limit(120),
  RATE_LIMIT_WEBHOOK: limit(30),
  RATE_LIMIT_CONTACTS: limit(10),
  RATE_LIMIT_GROUPS: limit(30),
  RATE_LIMIT_MEDIA: limit(60),
  RATE_LIMIT_ACCOUNT: limit(30),
  RATE_LIMIT_BROADCASTS: limit(30),
  CONTACT_LOOKUPS_PER_DAY: Joi.number().integer().min(0).default(1000),
  CONTACT_LOOKUP_BATCH_SIZE: Joi.number().integer().min(1).max(500).default(50),
  CONTACT_LOOKUP_PAUSE_MS: Joi.number().integer().min(0).default(1000),
  /** What the API keeps of the texts it opened for its pages (see OpenedTextCache); 0 turns it off. */
  OPENED_TEXT_CACHE_MB: Joi.number().integer().min(0).max(1024).default(8),
  WEBHOOK_SECRET_OVERLAP_SECONDS: Joi.number()
    .integer()
    .min(0)
    .default(24 * 3600),
  AUTH_FAILURE_LIMIT: Joi.number().integer().min(1).default(30),
  AUTH_FAILURE_WINDOW_MS: Joi.number()
    .integer()
    .min(1000)
    .default(15 * 60_000),
  MAX_RECIPIENTS: Joi.number().integer().min(1).max(100_000).default(10_000),
  ACCEPT_CHUNK_RECIPIENTS: Joi.number().integer().min(1).max(10_000).default(500),
  OTP_WAIT_TIMEOUT_MS: Joi.number().integer().min(100).default(20_000),
  CONNECTION_REPLY_TIMEOUT_MS: Joi.number().integer().min(100).default(30_000),
  IDEMPOTENCY_TTL_SECONDS: Joi.number()
    .integer()
    .min(60)
    .default(24 * 3600),
  DEVICE_MAX_QUEUED_MESSAGES: Joi.number().integer().min(1).default(20_000),
  DEVICE_MAX_QUEUED_BYTES: Joi.number()
    .integer()
    .min(1024 * 1024)
    .default(64 * 1024 * 1024),
  SEND_ATTEMPTS: Joi.number().integer().min(1).default(5),
  SEND_BACKOFF_MS: Joi.number().integer().min(10).default(2000),
  EVENT_LOG_RETENTION_HOURS: Joi.number()
    .integer()
    .min(1)
    .max(720)
    .default(EVENT_LOG_RETENTION_HOURS_DEFAULT),
  EVENT_STREAMS_PER_TOKEN: Joi.number().integer().min(1).max(1000).default(5),
  POOL_MOVE_INTERVAL_MS: Joi.number().integer().min(100).max(600_000).default(5000),
  POOL_MIN_HEALTH: Joi.number().integer().min(0).max(100).default(HEALTH_LOW_SCORE),
  HTTP_HEADERS_TIMEOUT_MS: Joi.number().integer().min(100).default(10_000),
  HTTP_REQUEST_TIMEOUT_MS: Joi.number().integer().min(100).default(30_000),
  HTTP_IDLE_TIMEOUT_MS: Joi.number().integer().min(100).default(10_000),
  WORKSPACE_MAX_DEVICES: Joi.number().integer().min(1).max(1_000_000).default(WORKSPACE_CEILINGS.devices),
  WORKSPACE_MAX_TOKENS: Joi.number().integer().min(1).max(1_000_000).default(WORKSPACE_CEILINGS.tokens),
  WORKSPACE_MAX_CONSOLE_USERS: Joi.number().integer().min(1).max(100_000).default(WORKSPACE_CEILINGS.users),
};

/** The dashboard and the admin API (`/dashboard`, `/api/admin/v1`); off while both secrets are unset. */
const adminEnv: Joi.PartialSchemaMap = {
  // '' counts as unset: a Secret key that is present but empty must not enable anything.
  ADMIN_PASSWORD: Joi.string().min(12).max(1024).allow(''),
  ADMIN_API_TOKEN: Joi.string().min(32).max(1024).pattern(/^\S+$/).allow(''),
  ADMIN_SESSION_TTL_SECONDS: Joi.number()
    .integer()
    .min(60)
    .default(12 * 3600),
  ADMIN_SIGNIN_LIMIT: Joi.number().integer().min(1).default(10),
  ADMIN_SIGNIN_WINDOW_MS: Joi.number()
    .integer()
    .min(1000)
    .default(15 * 60_000),
  DASHBOARD_ASSETS_DIR: Joi.string().allow(''),
  // Sandbox mode (the simulator's control API): the dashboard's linking panel says how to let the
  // simulated phone scan the QR. The API never calls it.
  MESSENGER_SANDBOX_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .optional(),
};

/** Node refuses a headers deadline later than the whole-request one. */
const apiRules: ConfigRule[] = [
  (e) =>
    e.HTTP_HEADERS_TIMEOUT_MS > e.HTTP_REQUEST_TIMEOUT_MS
      ? 'HTTP_HEADERS_TIMEOUT_MS must not be over HTTP_REQUEST_TIMEOUT_MS'
      : undefined,
  // `true` believes every address of X-Forwarded-For, so the leftmost — which any client writes,
  // a proxy only appends — would be the address the failure counters key on (docs/security.md).
  (e) =>
    e.TRUST_PROXY === true
      ? 'TRUST_PROXY=true trusts every address a client writes in X-Forwarded-For: set the number of proxies in front of the API (1) or their addresses'
      : undefined,
];

export interface RateLimitsConfig {
  connect: number;
  disconnect: number;
  status: number;
  send: number;
  otp: number;
  messages: number;
  webhook: number;
  contacts: number;
  groups: number;
  /** POST /media, DELETE /media/:id and the media settings (reads count with `messages`). */
  media: number;
  /** The account routes: profile, presence, contacts' profiles, blocklist (docs/account.md). */
  account: number;
  /** The status routes (`/statuses…`, docs/broadcasts.md). */
  broadcasts: number;
}

/** The number check (POST /contacts/check): its daily lookup cap and how its lookups are paced. */
export interface ContactCheckConfig {
  /** Numbers one device may look up at WhatsApp per day (cache hits excluded). */
  lookupsPerDay: number;
  /** Numbers per WhatsApp query. */
  batchSize: number;
  /** Pause between two queries of a device. */
  pauseMs: number;
}

export interface HttpConfig {
  /** Longest wait for a request's headers. */
  headersTimeoutMs: number;
  /** Longest wait for a whole request (headers and body). */
  requestTimeoutMs: number;
  /** Longest pause inside a request body before it is answered 408. */
  bodyIdleTimeoutMs: number;
}

export interface AdminConfig {
  /** Enables the dashboard and its sign-in; undefined = no dashboard. */
  password?: string;
  /** Bearer token of the admin API for automation; undefined = sessions only. */
  apiToken?: string;
  sessionTtlSeconds: number;
  /** Failed sign-ins one client IP may make per window before it is refused (429). */
  signInLimit: number;
  signInWindowMs: number;
  /** Where the built console is; undefined = @mgw/console's `dist/` (BUILT_CONSOLE_DIR). */
  dashboardDir?: string;
  /** The simulator's control API in sandbox mode (MESSENGER_SANDBOX_URL); undefined otherwise. */
  sandboxUrl?: string;
}

export interface ApiConfig extends RuntimeConfig {
  redis: RedisConfig;
  store: StoreConfig;
  encryption: EncryptionConfig;
  /** Port of /metrics (and /healthz, /readyz) apart from the public API port. */
  ops: OpsConfig;
  http: HttpConfig;
  port: number;
  host: string;
  /** express `trust proxy`: set behind a load balancer so client IPs are the real ones. */
  trustProxy: boolean | number | string;
  /** The device a token without a device link acts on. */
  defaultDeviceId: string;
  rateLimitWindowMs: number;
  rateLimits: RateLimitsConfig;
  authFailureLimit: number;
  authFailureWindowMs: number;
  maxRecipients: number;
  /** Recipients per transaction: a longer list is accepted in pieces of this size. */
  acceptChunkRecipients: number;
  otpWaitTimeoutMs: number;
  connectionReplyTimeoutMs: number;
  idempotencyTtlSeconds: number;
  /** What one device may hold in its queue (messages, and bytes of text and attachments). */
  deviceQuota: { maxQueuedMessages: number; maxQueuedBytes: number };
  /** Attempts and first retry delay of a send job (transient failures). */
  sendAttempts: number;
  /** The sending-policy defaults (as the senders have them), for GET /status and the admin API. */
  sendPolicy: SendPolicyConfig;
  sendBackoffMs: number;
  admin: AdminConfig;
  /** Private hosts webhook URLs may point at (ALLOWED_PRIVATE_HOSTS; none by default). */
  outbound: WebhookOutboundConfig;
  /** How long the previous webhook secret keeps signing after a rotation. */
  webhookSecretOverlapSeconds: number;
  /**
   * Where the Graph API is (CLOUD_GRAPH_URL): PUT /cloud and /connect check a cloud device's
   * credentials there, /send reads its templates there.
   */
  cloud: CloudConfig;
  contactCheck: ContactCheckConfig;
  /** Pools: how often a dropped device's waiting messages are looked for, and the health floor. */
  pools: { moveIntervalMs: number; minHealth: number };
  /** The event log (GET /events): how long an event is kept. */
  eventLog: { retentionMs: number };
  /** GET /events/stream: see services/api/src/features/events/event-streams.ts. */
  eventStream: EventStreamConfig;
  /** Bytes of opened texts the pages' reads keep in memory (OPENED_TEXT_CACHE_MB; 0: none). */
  openedTextCacheBytes: number;
  /** What every workspace may hold at most (WORKSPACE_MAX_*; docs/workspaces.md "Quotas"). */
  workspaceCeilings: WorkspaceCeilings;
}

export interface EventStreamConfig {
  /** Streams one token may hold open in this process (EVENT_STREAMS_PER_TOKEN). */
  perToken: number;
  /** A comment line this often keeps proxies from closing an idle stream (15 s). */
  keepAliveMs: number;
  /** Bytes a stream may have waiting in its socket before the reader counts as slow (1 MiB). */
  maxBufferedBytes: number;
  /** How long a full socket may stay full before the reader counts as slow (30 s). */
  stallMs: number;
}

/** Every environment variable this service reads, by schema piece. */
export const API_ENV = [
  runtimeEnv,
  redisEnv,
  opsEnv,
  storeEnv,
  encryptionEnv,
  webhookOutboundEnv,
  cloudEnv,
  SEND_POLICY_ENV,
  apiEnv,
  adminEnv,
];

export function loadApiConfig(env: NodeJS.ProcessEnv = process.env): ApiConfig {
  const e = validateEnv(API_ENV, env, apiRules);
  return {
    ...runtimeConfig(e),
    redis: redisConfig(e),
    store: storeConfig(e),
    encryption: encryptionConfig(e),
    ops: opsConfig(e),
    http: {
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
      bodyIdleTimeoutMs: e.HTTP_IDLE_TIMEOUT_MS,
    },
    port: e.PORT,
    host: e.HOST,
    trustProxy: e.TRUST_PROXY,
    defaultDeviceId: e.DEFAULT_DEVICE_ID,
    rateLimitWindowMs: e.RATE_LIMIT_WINDOW_MS,
    rateLimits: {
      connect: e.RATE_LIMIT_CONNECT,
      disconnect: e.RATE_LIMIT_DISCONNECT,
      status: e.RATE_LIMIT_STATUS,
      send: e.RATE_LIMIT_SEND,
      otp: e.RATE_LIMIT_OTP,
      messages: e.RATE_LIMIT_MESSAGES,
      webhook: e.RATE_LIMIT_WEBHOOK,
      contacts: e.RATE_LIMIT_CONTACTS,
      groups: e.RATE_LIMIT_GROUPS,
      media: e.RATE_LIMIT_MEDIA,
      account: e.RATE_LIMIT_ACCOUNT,
      broadcasts: e.RATE_LIMIT_BROADCASTS,
    },
    contactCheck: {
      lookupsPerDay: e.CONTACT_LOOKUPS_PER_DAY,
      batchSize: e.CONTACT_LOOKUP_BATCH_SIZE,
      pauseMs: e.CONTACT_LOOKUP_PAUSE_MS,
    },
    outbound: webhookOutboundConfig(e),
    cloud: cloudConfig(e),
    webhookSecretOverlapSeconds: e.WEBHOOK_SECRET_OVERLAP_SECONDS,
    authFailureLimit: e.AUTH_FAILURE_LIMIT,
    authFailureWindowMs: e.AUTH_FAILURE_WINDOW_MS,
    maxRecipients: e.MAX_RECIPIENTS,
    acceptChunkRecipients: e.ACCEPT_CHUNK_RECIPIENTS,
    otpWaitTimeoutMs: e.OTP_WAIT_TIMEOUT_MS,
    connectionReplyTimeoutMs: e.CONNECTION_REPLY_TIMEOUT_MS,
    idempotencyTtlSeconds: e.IDEMPOTENCY_TTL_SECONDS,
    deviceQuota: {
      maxQueuedMessages: e.DEVICE_MAX_QUEUED_MESSAGES,
      maxQueuedBytes: e.DEVICE_MAX_QUEUED_BYTES,
    },
    sendAttempts: e.SEND_ATTEMPTS,
    sendPolicy: sendPolicyConfig(e),
    sendBackoffMs: e.SEND_BACKOFF_MS,
    pools: { moveIntervalMs: e.POOL_MOVE_INTERVAL_MS, minHealth: e.POOL_MIN_HEALTH },
    eventLog: { retentionMs: e.EVENT_LOG_RETENTION_HOURS * 3_600_000 },
    eventStream: {
      perToken: e.EVENT_STREAMS_PER_TOKEN,
      keepAliveMs: 15_000,
      maxBufferedBytes: 1024 * 1024,
      stallMs: 30_000,
    },
    openedTextCacheBytes: e.OPENED_TEXT_CACHE_MB * 1024 * 1024,
    workspaceCeilings: {
      devices: e.WORKSPACE_MAX_DEVICES,
      tokens: e.WORKSPACE_MAX_TOKENS,
      users: e.WORKSPACE_MAX_CONSOLE_USERS,
    },
    admin: {
      ...(e.ADMIN_PASSWORD ? { password: e.ADMIN_PASSWORD } : {}),
      ...(e.ADMIN_API_TOKEN ? { apiToken: e.ADMIN_API_TOKEN } : {}),
      sessionTtlSeconds: e.ADMIN_SESSION_TTL_SECONDS,
      signInLimit: e.ADMIN_SIGNIN_LIMIT,
      signInWindowMs: e.ADMIN_SIGNIN_WINDOW_MS,
      ...(e.DASHBOARD_ASSETS_DIR ? { dashboardDir: e.DASHBOARD_ASSETS_DIR } : {}),
      ...(e.MESSENGER_SANDBOX_URL ? { sandboxUrl: e.MESSENGER_SANDBOX_URL } : {}),
    },
  };
}
