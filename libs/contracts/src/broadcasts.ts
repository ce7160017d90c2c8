/**
 * Status updates (WhatsApp's "stories"): the request body of POST /status, the content a status
 * carries through the send queue, its limits and its events. A status is sent to
 * `status@broadcast` with the list of its viewers, once, as a sender-key fan-out (docs/broadcasts.md).
 */
import { Joi } from './text.js';
import { isLidAddress, USER_SERVER } from './jid.js';
import type { ContactIdentity } from './contact.js';
import { LID_JID_PATTERN } from './groups.js';
import { PHONE_PATTERN } from './limits.js';
import { BASE64_RULE, isBase64 } from './attachment.js';
import { sendAtSchema } from './send-body.js';

/** WhatsApp's chat for status updates: a status is a message to it, with its viewers beside it. */
export const STATUS_JID = 'status@broadcast';
export const isStatusJid = (to: string): boolean => to === STATUS_JID;

export const STATUS_LIMITS = {
  /**
   * Viewers of one status. WhatsApp's apps post to every contact (thousands); one status costs one
   * Signal copy of the sender key per viewer's device, so the gateway bounds it. Over it, the
   * request is refused whole (400), never cut.
   */
  audience: 5000,
  /** A text status's length (WhatsApp's apps stop at 700 characters). */
  text: 700,
  /** How long WhatsApp shows a status: the API lists the ones sent within it. */
  liveMs: 24 * 60 * 60_000,
  /** Statuses a device keeps in its index (newest kept); older ones leave it. */
  indexed: 500,
} as const;

/** Error strings of the status routes. */
export const STATUS_ERRORS = {
  /** 404: no status of this device (unknown, expired, another device's). */
  notFound: 'Status not found',
  /** 409 on DELETE: a status is gone from WhatsApp a day after it was posted. */
  expired: 'The status has expired: WhatsApp shows a status for 24 hours',
  /** 409 on DELETE: it failed (WhatsApp never had it) or is already deleted. */
  notDeletable: 'The status cannot be deleted: it failed, is already deleted, or is being sent right now',
  /** 413 on POST /statuses. */
  bodyTooLarge:
    'Request body too large: a status is limited to 15 MB (an attachment of 10 MB and its audience)',
  /** 413 on PUT /statuses/settings. */
  settingsBodyTooLarge: 'Request body too large: status settings are limited to 1 KB',
} as const;

/** A message id the gateway gave (`newMessageId`: a UUID), as a path names it. */
export const MESSAGE_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A status's id in a path: a status is a message, its id the message's. */
export const STATUS_ID_PATTERN = MESSAGE_ID_PATTERN;

/** PUT /statuses/settings. */
export const statusSettingsSchema = Joi.object({ receiveStatuses: Joi.boolean().required() });

/** The fonts of a text status, by name (WhatsApp's `ExtendedTextMessage.FontType`). */
export const STATUS_FONTS = {
  system: 0,
  system_text: 1,
  fb_script: 2,
  system_bold: 6,
  morningbreeze: 7,
  calistoga: 8,
  exo2: 9,
  courierprime: 10,
} as const;
export type StatusFont = keyof typeof STATUS_FONTS;

/** The attachment types a status may carry: a picture, a video or a voice note. */
export const STATUS_ATTACHMENT_TYPES = ['image', 'video', 'audio'] as const;

/** How POST /status names its audience: numbers (or LIDs), or every chat of the account. */
export type StatusAudienceInput = string[] | 'contacts';

export interface StatusBody {
  text?: string;
  backgroundColor?: string;
  font?: StatusFont;
  attachment?: {
    type: (typeof STATUS_ATTACHMENT_TYPES)[number];
    url?: string;
    base64?: string;
    caption?: string;
    mimeType?: string;
  };
  audience: StatusAudienceInput;
  sendAt?: string;
}

const audienceEntry = Joi.alternatives()
  .try(Joi.string().pattern(PHONE_PATTERN), Joi.string().max(40).pattern(LID_JID_PATTERN))
  .messages({
    'alternatives.match':
      '{{#label}} must be a phone number in international format (digits only, 7 to 15) or a LID such as 123456789012345@lid',
  });

/** `#RRGGBB` or `#AARRGGBB`. */
const COLOR_PATTERN = /^#([0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/;

/** POST /status. Bounds that need the whole body (text or attachment, audio without text) are in `statusBodyProblems`. */
export const statusBodySchema = Joi.object<StatusBody>({
  text: Joi.string().trim().min(1).max(STATUS_LIMITS.text),
  backgroundColor: Joi.string()
    .pattern(COLOR_PATTERN)
    .messages({ 'string.pattern.base': '"backgroundColor" must be a colour such as #25D366 or #FF25D366' }),
  font: Joi.string().valid(...Object.keys(STATUS_FONTS)),
  attachment: Joi.object({
    type: Joi.string()
      .valid(...STATUS_ATTACHMENT_TYPES)
      .required(),
    url: Joi.string()
      .max(2048)
      .uri({ scheme: ['http', 'https'] }),
    base64: Joi.string()
      .min(1)
      .custom(
        (value: string, helpers) => (isBase64(value) ? value : helpers.error('string.base64')),
        BASE64_RULE,
      ),
    caption: Joi.string().max(1024),
    mimeType: Joi.string()
      .max(255)
      .pattern(/^[\w.+-]+\/[\w.+-]+(\s*;\s*[\w.+-]+=[\w.+-]+)*$/),
  })
    .xor('url', 'base64')
    .messages({
      'object.missing': 'attachment must have either url or base64',
      'object.xor': 'attachment must have either url or base64, not both',
    }),
  // A conditional, not .try: a list reports its own problem (empty, too long, a twice-named
  // viewer) instead of "matches none of the allowed types".
  audience: Joi.alternatives()
    .conditional(Joi.array(), {
      then: Joi.array()
        .items(audienceEntry)
        .min(1)
        .max(STATUS_LIMITS.audience)
        .unique()
        .messages({
          'array.min': `"audience" must name 1 to ${STATUS_LIMITS.audience.toLocaleString('en-US')} viewers`,
          'array.max': `"audience" must name 1 to ${STATUS_LIMITS.audience.toLocaleString('en-US')} viewers`,
          'array.unique': '"audience" names {{#dupeValue}} twice',
        }),
      otherwise: Joi.string().valid('contacts'),
    })
    .required()
    .messages({
      'alternatives.types': '"audience" must be a list of phone numbers or "contacts"',
      'alternatives.any': '"audience" must be a list of phone numbers or "contacts"',
    }),
  sendAt: sendAtSchema,
})
  .or('text', 'attachment')
  .messages({ 'object.missing': 'Either text or attachment must be provided' });

/** The rules the schema cannot say field by field (paths as joi names them). */
export function statusBodyProblems(body: StatusBody): { path: string[]; message: string }[] {
  const problems: { path: string[]; message: string }[] = [];
  const styled = body.backgroundColor !== undefined || body.font !== undefined;
  if (body.attachment && styled)
    problems.push({
      path: [body.backgroundColor !== undefined ? 'backgroundColor' : 'font'],
      message: 'backgroundColor and font apply to a text status only, not with an attachment',
    });
  if (body.attachment?.type === 'audio' && (body.text !== undefined || body.attachment.caption !== undefined))
    problems.push({ path: ['text'], message: 'a voice status has no text or caption' });
  if (body.attachment && body.text !== undefined && body.attachment.caption !== undefined)
    problems.push({ path: ['text'], message: 'give the text as text or as the caption, not both' });
  return problems;
}

/** An audience entry as the JID a status goes to. */
export const audienceJid = (entry: string): string =>
  isLidAddress(entry) ? entry : `${entry}@${USER_SERVER}`;

/** `data` of status.viewed: a viewer opened one of our statuses (once per viewer and status). */
export interface StatusViewedEventData {
  deviceId: string;
  messageId: string;
  platformMessageId: string;
  viewer: ContactIdentity;
  viewedAt: string;
}

/** `data` of status.received: a contact posted a status (only when the device asked for them). */
export interface StatusReceivedEventData {
  deviceId: string;
  platformMessageId: string;
  contact: ContactIdentity;
  text?: string;
  attachment?: { type: string; mimeType: string; size: number };
  backgroundColor?: string;
  postedAt: string;
}

/** An entry of GET /status: one of our statuses and who viewed it. */
export interface StatusSummary {
  messageId: string;
  batchId?: string;
  status: string;
  kind: 'text' | 'image' | 'video' | 'audio';
  audienceSize: number;
  sendAt?: string;
  sentAt?: string;
  expiresAt?: string;
  error?: string;
  views: number;
  viewers: { viewer: ContactIdentity; viewedAt: string }[];
}
