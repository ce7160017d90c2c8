import type { PasskeyStep } from './passkeys.js';
import type {
  AttachmentType,
  ConnectMethod,
  ConnectionStatus,
  MessageStatus,
  OtpLanguage,
} from './limits.js';
import type { ContactIdentity } from './contact.js';
import type { MessageKindContent, ReactionTarget } from './message-kinds.js';
import type { DeviceEngine, TemplateInput } from './cloud.js';

/**
 * Where an attachment's bytes are: fetched by the sender from a URL, or the base64 bytes of the
 * request, stored once inside the request's content record (`size` bytes).
 */
export type AttachmentSource =
  | { url: string }
  | { stored: true; size: number }
  /** An object uploaded with POST /media (the media store): only its id is in the content. */
  | { mediaId: string; size: number };

export interface ContentAttachment {
  type: AttachmentType;
  source: AttachmentSource;
  filename?: string;
  caption?: string;
  mimeType?: string;
}

/** What a status carries through the queue beside its text/attachment (sealed with the content). */
export interface StatusContent {
  /** The viewers' JIDs (`<phone>@s.whatsapp.net` or `<digits>@lid`), deduplicated. */
  audience: string[];
  /** ARGB as `#AARRGGBB` (a text status's background). */
  backgroundColor?: string;
  /** WhatsApp's font number (STATUS_FONTS). */
  font?: number;
}

/**
 * What one request shares between all its messages, stored once (sealed) in `keys.content`:
 * a 1,000-recipient batch costs one copy of its text and attachment, not 1,000.
 */
export interface MessageContent extends MessageKindContent {
  /** A reaction's target as WhatsApp knows it (resolved from `reaction.messageId` when accepted). */
  reactionTarget?: ReactionTarget;
  text?: string;
  attachment?: ContentAttachment;
  /** Our messageId of a message to reply to (resolved by the sender to the stored WhatsApp message). */
  existingMessageId?: string;
  otp?: { language: OtpLanguage };
  /** Phones or LIDs the text or caption mentions. */
  mentions?: string[];
  /**
   * A personalised batch: `text` and the caption hold `{{name}}` placeholders, filled per message
   * from its recipient's variables (sealed in the content record, see ContentStore.stageVars).
   */
  personalised?: true;
  /** An edit / a delete for everyone of one of our sent messages (our messageId; see revisions.ts). */
  edit?: { messageId: string; text: string };
  delete?: { messageId: string };
  /** `linkPreview: false` of the request (stored only then: the default sends a preview). */
  linkPreview?: false;
  /** A status update (to `status@broadcast`): its viewers and a text status's style (broadcasts.ts). */
  status?: StatusContent;
  /** A template message of the number's WABA (cloud devices only; docs/cloud-api.md). */
  template?: TemplateInput;
}

/** A send job: one recipient, one message; ids only, never content. The job id is `messageId`. */
export interface SendJobData {
  kind: 'send' | 'otp';
  messageId: string;
  /** The WhatsApp message id, fixed at enqueue time so a retry re-sends the same message. */
  platformMessageId: string;
  deviceId: string;
  to: string;
  /** The request's content record (`keys.content(deviceId, contentId)`). */
  contentId: string;
  /** When this job belongs to a batch: the batch id returned to the client. */
  batchId?: string;
  /**
   * The device's link generation when the message was accepted. Removing a device's messages
   * (logout, unlink, forceNew) starts a new generation: an older message is never sent.
   */
  linkGeneration: number;
  /** OTP only: no attempt starts after this time (epoch ms); the API's answer has been given. */
  expiresAt?: number;
  enqueuedAt: number;
  /**
   * The confirmation of an opt-out or opt-in the sender enqueues itself: it goes to the number
   * even though the number is on the suppression list (it is the last message it gets).
   */
  optOutNotice?: true;
  /** A scheduled send: not sent before this time (epoch ms; the job is delayed until then). */
  sendAt?: number;
  /**
   * A message of a batch sent through a pool: the pool that spreads it. It may move to another
   * device of the pool while no attempt of it started (libs/store/src/pools/).
   */
  poolId?: string;
}

/** What a completed send job returns (OTP: the API returns it to the client). */
export interface SendJobResult {
  messageId: string;
  platformMessageId: string;
  phone: string;
  sentAt: string;
}

export interface ConnectRequest {
  action: 'connect';
  deviceId: string;
  method: ConnectMethod;
  phoneNumber?: string;
  forceNew: boolean;
  rawQrCode: boolean;
  /** Epoch ms after which nobody waits for the answer: the service drops the request unread. */
  expiresAt?: number;
}

export interface DisconnectRequest {
  action: 'disconnect';
  deviceId: string;
  expiresAt?: number;
}

export type ConnectionRequest = ConnectRequest | DisconnectRequest;

/** The connection service's answer; the API passes it through as the response body. */
export interface ConnectionReply {
  success: boolean;
  status?: ConnectionStatus;
  qrCode?: string;
  pairingCode?: string;
  message?: string;
  error?: string;
  /** HTTP status the API should use when success is false (default 409). */
  httpStatus?: number;
}

/** The stored message record (`keys.message(id)`), as returned by GET /messages/:id. */
export interface MessageRecord {
  messageId: string;
  deviceId: string;
  /** A phone number, or a LID (`<digits>@lid`) as the request named it. */
  to: string;
  /** The recipient as the device knows it (added when the API shows the record). */
  contact?: ContactIdentity;
  status: MessageStatus;
  kind: 'send' | 'otp';
  platformMessageId: string;
  batchId?: string;
  createdAt: string;
  /** A scheduled send: when it is due (`status` reads `scheduled` until then). */
  sendAt?: string;
  sentAt?: string;
  deliveredAt?: string;
  readAt?: string;
  failedAt?: string;
  error?: string;
  /** `outbound` (sent by the gateway); inbound messages have their own shape (InboundRecord). */
  direction?: 'outbound' | 'inbound';
  /** Why a `queued` message waits, and until when (see HELD_REASONS); absent once it goes on. */
  held?: HeldInfo;
  /**
   * Whether its send began: true once an attempt may have handed it to WhatsApp's socket (or one
   * is under way, or it was sent); false while every attempt ended before that (not connected,
   * closed before the write, refused with an error ack). Absent before the first attempt.
   */
  sendBegan?: boolean;
  /**
   * Which engine attempted it: `linked` (the linked-device protocol) or `cloud` (the Cloud API).
   * Present once an attempt was claimed (with `sendBegan`), absent before.
   */
  engine?: DeviceEngine;
  /** Status `deleted`: when it was deleted for everyone (or, unsent, taken out of the queue). */
  deletedAt?: string;
  /** An edited text: its edits, oldest first, and its current text (the last edit's). */
  edits?: { text: string; at: string }[];
  text?: string;
  /** The recipient's phone could not decrypt it and asked again (retry receipts); absent when it never asked. */
  retries?: MessageRetries;
}

/**
 * A message's retry receipts: how often the recipient asked for it again, how often the gateway
 * re-sent it, the last of either, and — when the asks reached MESSAGE_RETRY_MAX while it was
 * still `sent` — when it was marked undecryptable (`message.undecryptable`; the status stays `sent`).
 */
export interface MessageRetries {
  asked: number;
  answered: number;
  lastAt?: string;
  undecryptableAt?: string;
}

/**
 * Why a queued message waits in its queue instead of being sent: the window's daily cap, the
 * warm-up step's cap, the first-contact cap, quiet hours, the device's pause (WhatsApp pushed
 * back), its batch's pause, its `sendAt`, or (pooled) its device's logout until its pool moves it.
 */
export const HELD_REASONS = [
  'daily_cap',
  'warmup_cap',
  'first_contact_cap',
  'quiet_hours',
  'device_paused',
  'batch_paused',
  'scheduled',
  /** A pooled message on a device that was logged out: it waits for its pool to move it. */
  'device_logged_out',
  /** The device's workspace is suspended (docs/workspaces.md): it waits for the operator to resume it. */
  'workspace_suspended',
  /** A cloud device whose access token stopped working: it waits for `/connect` with a working one. */
  'device_disconnected',
  /** A cloud device's message to a contact it wrote to just before: it waits for the pair rate's slot. */
  'pair_rate',
] as const;
export type HeldReason = (typeof HELD_REASONS)[number];

/** `held` of a message record: the reason and when the sender looks at the message again (ISO 8601). */
export interface HeldInfo {
  reason: HeldReason;
  until: string;
}

/**
 * Why a connection through a device's proxy failed, a bounded label (metric `kind`; the session's
 * `lastDisconnectReason` and the `reason` of GET /status read `proxy_<kind>`): `unreachable` (the
 * proxy did not answer: refused, timed out, not found), `auth` (it wants other credentials: HTTP
 * 407, SOCKS5 authentication refused), `refused` (it would not connect to the target), `error`.
 */
export const PROXY_ERROR_KINDS = ['unreachable', 'auth', 'refused', 'error'] as const;
export type ProxyErrorKind = (typeof PROXY_ERROR_KINDS)[number];

/** The session record of a device (`keys.session(deviceId)`), read by GET /status. */
export interface SessionRecord {
  status: ConnectionStatus;
  phone?: string;
  name?: string;
  profilePic?: string;
  updatedAt?: string;
  connectedAt?: string;
  lastDisconnectReason?: string;
  lastDisconnectAt?: string;
  /** A passkey-gated link's step and when its request expires (ISO): SessionStore.passkeyStep. */
  passkeyStep?: PasskeyStep;
  passkeyExpiresAt?: string;
}
