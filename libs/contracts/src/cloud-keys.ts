import { P, device } from './key-spaces.js';

/**
 * The keys of the Cloud API engine (docs/cloud-api.md), part of `keys` (keys.ts: the one place that
 * knows how keys are spelled): a cloud device's own, in its slot, and the global indexes Meta's
 * webhooks are routed by.
 */
export const cloudKeys = {
  /** Hash: Cloud API phone-number id -> the device it is (one device per number, install-wide). */
  cloudNumbers: () => `${P}:cloud:numbers`,
  /**
   * Set: the cloud devices whose verify token has this SHA-256. Meta's webhook handshake names no
   * number, only the token, so it is found by its digest (never stored in the clear); devices of
   * one Meta app share theirs.
   */
  cloudVerifyToken: (sha256Hex: string) => `${P}:cloud:verify-token:${sha256Hex}`,
  /**
   * String (SET NX with a TTL): one webhook delivery from Meta, by the SHA-256 of its signed body,
   * seen within the replay bound: a replay of it changes nothing.
   */
  cloudWebhookSeen: (bodySha256Hex: string) => `${P}:cloud:seen:${bodySha256Hex}`,
  /**
   * String: a Cloud API device's configuration (`CloudDeviceConfig` JSON: its ids and its access
   * token, app secret and verify token), sealed (libs/store devices/cloud-device.ts). Present
   * exactly while the device's engine is `cloud`.
   */
  cloudDevice: (deviceId: string) => `${device(deviceId)}:cloud`,
  /** String: what the cloud device's number said of itself when last checked (`CloudNumberProfile` JSON). */
  cloudProfile: (deviceId: string) => `${device(deviceId)}:cloud:profile`,
  /** String: the cloud device's `CloudDeviceState` JSON (connected, or disconnected and why). */
  cloudState: (deviceId: string) => `${device(deviceId)}:cloud:state`,
  /**
   * Sorted set: the cloud device's open 24-hour windows, contact wa_id -> time (ms) of the contact's
   * last message; entries older than the window are trimmed as they are read.
   */
  cloudWindows: (deviceId: string) => `${device(deviceId)}:cloud:windows`,
  /** Sorted set: the tier's unique contacts outside a window, wa_id -> ms of the last message (24 h). */
  cloudReached: (deviceId: string) => `${device(deviceId)}:cloud:reached`,
  /** String: a cloud device's media id of one attachment (its cache key's SHA-256; kept < 30 days). */
  cloudMedia: (deviceId: string, keySha256: string) => `${device(deviceId)}:cloud:media:${keySha256}`,
  /**
   * String (JSON, with a TTL): the cloud device's WABA's templates as the API last read them from
   * the Graph API (their names, languages, statuses and parameter counts; not secret), for /send's
   * check of `template` (services/api features/cloud-send/template-catalog.ts).
   */
  cloudTemplates: (deviceId: string) => `${device(deviceId)}:cloud:templates`,
  /**
   * String (TTL = message retention): the device that sent this device's OTP for it — its pool's
   * Cloud API device, when the OTP fell back (`otpFallback`) — so that GET /messages/:id with this
   * device's token reads the record where it lives.
   */
  otpSentVia: (deviceId: string, messageId: string) => `${device(deviceId)}:msg-via:${messageId}`,
} as const;
