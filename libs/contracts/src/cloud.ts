/**
 * The Cloud API engine's shared facts (docs/cloud-api.md): a device is `linked` (the
 * linked-device protocol, through Baileys) or `cloud` (a phone number of WhatsApp's Cloud API,
 * through Meta's Graph API). A device is `cloud` exactly while it holds a cloud configuration
 * (`keys.cloudDevice`); every other device is `linked`, so nothing existing migrates.
 */

export const DEVICE_ENGINES = ['linked', 'cloud'] as const;
export type DeviceEngine = (typeof DEVICE_ENGINES)[number];

/** A Graph API node id (phone-number id, WABA id): digits, as Meta writes them. */
export const GRAPH_ID_PATTERN = /^[0-9]{1,32}$/;

/**
 * Where Meta's webhooks arrive, one endpoint per install (Meta calls it: no API token), routed to
 * the device by `metadata.phone_number_id`. Its base is served only in this spelling, as the APIs'.
 */
export const CLOUD_WEBHOOK_BASE = '/api/cloud/v1';
export const CLOUD_WEBHOOK_PATH = `${CLOUD_WEBHOOK_BASE}/webhook`;

/** The webhook endpoint's error strings (its answers are Meta's to read, and an operator's). */
export const CLOUD_WEBHOOK_ERRORS = {
  handshakeRefused: 'Webhook verification failed: hub.mode, hub.verify_token or hub.challenge is wrong',
  badSignature: 'Invalid X-Hub-Signature-256 signature',
  malformed: 'Malformed webhook payload: expected the whatsapp_business_account JSON object',
  notJson: 'Content-Type must be application/json',
  empty: 'The webhook body is empty',
  tooLarge: 'Request body too large: webhook bodies are limited to 1 MB',
} as const;

/** The Graph API version the gateway speaks unless a device names another (`v21.0`). */
export const DEFAULT_GRAPH_VERSION = 'v21.0';
export const GRAPH_VERSION_PATTERN = /^v[0-9]{1,3}\.[0-9]{1,2}$/;

/** Meta's default throughput of a Cloud API number: 80 messages a second. */
export const DEFAULT_CLOUD_THROUGHPUT_PER_SECOND = 80;
/** The most a number may be configured to (Meta raises numbers to 1,000 messages a second). */
export const MAX_CLOUD_THROUGHPUT_PER_SECOND = 1000;

/** The customer service window: free-form messages only within 24 h of the contact's last message. */
export const CLOUD_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * How old a webhook event may be and still change anything: 24 h, the customer service window (a
 * message older than that opens no window; a status that late is kept by nobody's dashboard in
 * time). An older event is dropped and counted; so a replayed body is either seen within
 * CLOUD_WEBHOOK_SEEN_TTL_SECONDS (its key is still there) or its events are too old to act on.
 */
export const CLOUD_WEBHOOK_MAX_AGE_MS = CLOUD_WINDOW_MS;
/**
 * How long a delivery's digest is kept (`keys.cloudWebhookSeen`): the events' bound plus an hour
 * for Meta's clock against ours. One short key per delivery for a day (about 100 bytes each).
 */
export const CLOUD_WEBHOOK_SEEN_TTL_SECONDS = CLOUD_WEBHOOK_MAX_AGE_MS / 1000 + 3600;
/** The largest webhook body read (Meta batches at most a few hundred small events: tens of KB). */
export const CLOUD_WEBHOOK_MAX_BYTES = 1024 * 1024;

/** Bounds of the configuration's strings (an access token is a few hundred characters). */
export const CLOUD_LIMITS = {
  accessToken: 4096,
  appSecret: 256,
  verifyToken: 256,
} as const;

/**
 * What an operator (or a workspace) gives to make a device a Cloud API number. The three secrets
 * are sealed at rest and never shown again; the ids are not secret.
 */
export interface CloudDeviceInput {
  /** The phone-number id (not the phone number): the node `/{phone-number-id}/messages` is sent from. */
  phoneNumberId: string;
  /** The WhatsApp Business Account id: where the number's templates are listed. */
  wabaId: string;
  /** A system user's access token with whatsapp_business_messaging (and _management for templates). */
  accessToken: string;
  /** The Meta app's secret: it signs the webhooks (`X-Hub-Signature-256`). */
  appSecret: string;
  /** The token Meta echoes in the webhook verification handshake (`hub.verify_token`). */
  verifyToken: string;
  /** Messages a second this number may send (its throughput); default 80. */
  throughputPerSecond?: number;
  /** The Graph API version; default DEFAULT_GRAPH_VERSION. */
  graphVersion?: string;
  /**
   * The authentication template `/otp` sends on this device (name, with the copy-code button),
   * in `en`/`en_US` and `ar`; default `verification_code`.
   */
  otpTemplate?: string;
}

/** A cloud device's configuration as stored (sealed) and read back by the engine. */
export interface CloudDeviceConfig extends Required<CloudDeviceInput> {
  updatedAt: string;
}

/** What the API shows of a cloud device's configuration: never a secret. */
export interface CloudDeviceView {
  engine: 'cloud';
  phoneNumberId: string;
  wabaId: string;
  throughputPerSecond: number;
  graphVersion: string;
  otpTemplate: string;
  updatedAt: string;
}

/** What the number's Graph node says of itself (GET /{phone-number-id}), kept for /status. */
export interface CloudNumberProfile {
  displayPhoneNumber: string;
  verifiedName: string;
  /** GREEN, YELLOW, RED or UNKNOWN. */
  qualityRating: string;
  /** TIER_50, TIER_250, TIER_1K, TIER_10K, TIER_100K, TIER_UNLIMITED (absent when Meta says none). */
  messagingLimitTier?: string;
  checkedAt: string;
}

/** The number's digits as `/status` shows a phone: Meta's display number (`+1 555-010-0001`) without its marks. */
export function cloudPhoneOf(profile: Pick<CloudNumberProfile, 'displayPhoneNumber'>): string {
  return profile.displayPhoneNumber.replace(/\D/g, '');
}

export function cloudView(config: CloudDeviceConfig): CloudDeviceView {
  return {
    engine: 'cloud',
    phoneNumberId: config.phoneNumberId,
    wabaId: config.wabaId,
    throughputPerSecond: config.throughputPerSecond,
    graphVersion: config.graphVersion,
    otpTemplate: config.otpTemplate,
    updatedAt: config.updatedAt,
  };
}

/**
 * A template message (`/send` with `template`, cloud devices only): an approved template of the
 * number's WABA by name and language, with its components' parameters in the Graph API's own shape
 * (https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages#template-object).
 */
export interface TemplateInput {
  name: string;
  /** The template's language code as the WABA lists it (`en_US`, `ar`). */
  language: string;
  /** `[{ type: 'body' | 'header' | 'button', sub_type?, index?, parameters: [...] }]`. */
  components?: Record<string, unknown>[];
}

/** Why a cloud device is disconnected: its token no longer works, or it was never connected. */
export interface CloudDeviceState {
  /** `connected` after a `/connect` whose check passed, until the token fails or `/disconnect`. */
  status: 'connected' | 'disconnected';
  /** The failure reason that turned it `disconnected` (`cloud_token_expired`), when one did. */
  reason?: string;
  at: string;
}
