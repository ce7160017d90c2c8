/**
 * Redis key builders: the one place that knows how keys are spelled.
 * Everything lives under `mgw:` so a shared Redis can be inspected and cleaned by prefix.
 */
const P = 'mgw';

export const keys = {
  /** Hash: the token record, found by the SHA-256 of the token value. */
  tokenByHash: (sha256Hex: string) => `${P}:token:${sha256Hex}`,
  /** Hash: token id -> SHA-256, so tokens can be listed and revoked without their values. */
  tokenIndex: () => `${P}:tokens`,
  /** Hash: the session record of a device. */
  session: (deviceId: string) => `${P}:session:${deviceId}`,
  /** Set: device ids that have credentials; the senders claim these. */
  linkedDevices: () => `${P}:devices:linked`,
  /** Hash: a message record (TTL = message retention). */
  message: (messageId: string) => `${P}:msg:${messageId}`,
  /** String: WhatsApp message id -> our message id, for receipts and replies. */
  messageByPlatformId: (deviceId: string, platformMessageId: string) =>
    `${P}:msgp:${deviceId}:${platformMessageId}`,
  /** String (binary): an attachment stored once for all jobs of a request (TTL). */
  mediaBlob: (blobId: string) => `${P}:media:${blobId}`,
  /** String: stored first response of an Idempotency-Key (per token), 24 h. */
  idempotency: (tokenHash: string, key: string) => `${P}:idem:${tokenHash}:${key}`,
  /** Rate-limit counters, per endpoint (rate-limit-redis adds the token hash). */
  rateLimitPrefix: (endpoint: string) => `${P}:rl:${endpoint}:`,
  /** Baileys credentials of a device (JSON, Buffer-aware). */
  authCreds: (deviceId: string) => `${P}:auth:${deviceId}:creds`,
  /** Hash per Signal key type: field = key id, value = JSON. */
  authKeys: (deviceId: string, type: string) => `${P}:auth:${deviceId}:keys:${type}`,
  /** Pattern of every auth key of a device (for purge on logout). */
  authPattern: (deviceId: string) => `${P}:auth:${deviceId}:*`,
  /** String: the device lease, `{owner, epoch}` JSON with a TTL. */
  lease: (deviceId: string) => `${P}:lease:${deviceId}`,
  /** Counter: lease epochs of a device, so ownership changes are totally ordered. */
  leaseEpoch: (deviceId: string) => `${P}:lease-epoch:${deviceId}`,
  /** Pub/sub channel: tells senders to look for devices to claim now (after a link). */
  devicesChannel: () => `${P}:events:devices`,
  /** Hash: per-device settings (e.g. sendGapMs). */
  deviceSettings: (deviceId: string) => `${P}:device-settings:${deviceId}`,
} as const;
