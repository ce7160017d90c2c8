/** The spec's attachment limit: 10 MB of decoded file data. */
export const ATTACHMENT_MAX_BYTES = 10 * 1024 * 1024;

/**
 * Longest strings a /send body may carry, in characters. `text` and `caption` are WhatsApp's own
 * limits (longer ones are cut or refused by the app); a URL over 2,048 characters is not one any
 * browser or CDN serves; `filename` is what file systems allow; `existingMessageId` is one of ours.
 */
export const STRING_LIMITS = {
  text: 65_536,
  caption: 1024,
  url: 2048,
  filename: 255,
  existingMessageId: 128,
} as const;

/** Attachment types of the spec. */
export const ATTACHMENT_TYPES = ['image', 'video', 'audio', 'document', 'sticker'] as const;
export type AttachmentType = (typeof ATTACHMENT_TYPES)[number];

export const OTP_LANGUAGES = ['English', 'Arabic'] as const;
export type OtpLanguage = (typeof OTP_LANGUAGES)[number];

export const CONNECT_METHODS = ['qrCode', 'pairingCode'] as const;
export type ConnectMethod = (typeof CONNECT_METHODS)[number];

export const CONNECTION_STATUSES = ['connected', 'disconnected', 'connecting'] as const;
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];

/**
 * `scheduled`: a scheduled send before its `sendAt` (a status read from the message's job and
 * its time, never stored: when due the same message reads `queued`, and moves on from there).
 * `deleted`: deleted for everyone (`delete` on POST /send), or never sent because it was deleted
 * while queued; final, like `failed`.
 */
export const MESSAGE_STATUSES = [
  'scheduled',
  'queued',
  'sent',
  'delivered',
  'read',
  'failed',
  'deleted',
] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** Rank of each status: a receipt may only move a record forward (read never goes back to delivered). */
export const MESSAGE_STATUS_RANK: Record<MessageStatus, number> = {
  scheduled: 0,
  queued: 0,
  sent: 1,
  delivered: 2,
  read: 3,
  failed: 4,
  deleted: 5,
};

/** Phone numbers: digits only, international format with country code, no leading zero (E.164 without '+'). */
export const PHONE_PATTERN = /^[1-9]\d{6,14}$/;

/** Device ids are short slugs: they appear in queue names, Redis keys and metric labels. */
export const DEVICE_ID_PATTERN = /^[a-z0-9](?:[a-z0-9_-]{0,31})$/;

/** Pool ids: slugs like device ids (they appear in Redis keys and metric labels). */
export const POOL_ID_PATTERN = DEVICE_ID_PATTERN;

/** Workspace ids: slugs like device ids (they appear in Redis keys). */
export const WORKSPACE_ID_PATTERN = DEVICE_ID_PATTERN;

/**
 * The workspace that owns everything no other workspace owns: every device, token and pool of an
 * install from before workspaces, and what the operator makes without naming one (docs/workspaces.md).
 */
export const DEFAULT_WORKSPACE = 'default';

/** The API's rate-limited endpoints, with the spec's per-minute defaults. */
export const RATE_LIMITS = {
  connect: 15,
  disconnect: 5,
  status: 20,
  send: 30,
  otp: 10,
} as const;

/** Numbers one POST /contacts/check may ask about. */
export const MAX_CONTACT_CHECK = 1000;
